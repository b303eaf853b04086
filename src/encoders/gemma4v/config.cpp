#include "encoders/gemma4v/config.h"

#include <cmath>
#include <string_view>

#include "base/error.h"
#include "base/log.h"
#include "encoders/clipped_linear.h"
#include "encoders/mmproj_file.h"
#include "encoders/mmproj_keys.h"
#include "gguf/gguf_writer.h"
#include "kernels/kv_types.h"

namespace tandem {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A u32 key llama.cpp requires, read with its exact type.
int RequireU32(const GgufFile& f, const char* key) {
  if (!f.HasKey(key)) {
    Fail(ErrorKind::kNotFound,
         f.path() + ": key '" + key + "' not found (required by the gemma4v vision encoder)");
  }
  const uint32_t v = f.GetU32(key);  // throws naming the key on another type
  if (v > (1u << 30)) {
    Fail(ErrorKind::kInvalidArgument,
         f.path() + ": key '" + key + "' is " + std::to_string(v) + ", which is out of range");
  }
  return static_cast<int>(v);
}

std::array<float, 3> OptionalTriple(const GgufFile& f, const char* key,
                                    std::array<float, 3> fallback) {
  if (!f.HasKey(key)) return fallback;
  const std::vector<float> v = f.GetF32Array(key);  // throws unless array[f32]
  if (v.size() < 3) {
    Fail(ErrorKind::kInvalidArgument, f.path() + ": key '" + key + "' has " +
                                          std::to_string(v.size()) +
                                          " elements, expected at least 3 (R, G, B)");
  }
  return {v[0], v[1], v[2]};
}

}  // namespace

Gemma4VisionConfig Gemma4VisionConfig::FromMmproj(const MmprojFile& mmproj) {
  mmproj.Require(Modality::kVision, "gemma4v");
  const GgufFile& f = mmproj.gguf();
  Gemma4VisionConfig c;
  c.n_embd_text = RequireU32(f, mmproj::kVisionProjectionDim);
  c.image_size = RequireU32(f, mmproj::kVisionImageSize);
  c.patch_size = RequireU32(f, mmproj::kVisionPatchSize);
  c.n_embd = RequireU32(f, mmproj::kVisionEmbeddingLength);
  c.n_ff = RequireU32(f, mmproj::kVisionFeedForwardLength);
  c.n_layer = RequireU32(f, mmproj::kVisionBlockCount);
  c.n_head = RequireU32(f, mmproj::kVisionHeadCount);
  if (!f.HasKey(mmproj::kVisionLayerNormEps)) {
    Fail(ErrorKind::kNotFound, f.path() + ": key '" + mmproj::kVisionLayerNormEps +
                                   "' not found (required by the gemma4v vision encoder)");
  }
  c.eps = f.GetF32(mmproj::kVisionLayerNormEps);
  c.n_head_kv = static_cast<int>(f.FindU32(mmproj::kVisionHeadCountKv).value_or(c.n_head));
  const std::optional<uint32_t> head_dim = f.FindU32(mmproj::kVisionHeadDim);
  if (!head_dim && c.n_head > 0 && c.n_embd % c.n_head != 0) {
    Fail(ErrorKind::kInvalidArgument,
         f.path() + ": " + mmproj::kVisionEmbeddingLength + " " + std::to_string(c.n_embd) +
             " is not a multiple of " + mmproj::kVisionHeadCount + " " + std::to_string(c.n_head) +
             " and no " + mmproj::kVisionHeadDim + " is given");
  }
  c.head_dim = head_dim ? static_cast<int>(*head_dim) : (c.n_head > 0 ? c.n_embd / c.n_head : 0);
  c.pooling = static_cast<int>(f.FindU32(mmproj::kVisionScaleFactor).value_or(3));
  c.image_mean = OptionalTriple(f, mmproj::kVisionImageMean, c.image_mean);
  c.image_std = OptionalTriple(f, mmproj::kVisionImageStd, c.image_std);
  c.use_gelu = f.metadata().FindBool(mmproj::kUseGelu);
  c.use_silu = f.metadata().FindBool(mmproj::kUseSilu);

  const TensorInfo* pos = f.FindTensor("v.position_embd.weight");
  if (pos == nullptr) {
    Fail(ErrorKind::kNotFound, f.path() + ": missing tensor 'v.position_embd.weight' {" +
                                   std::to_string(c.n_embd) + ", S, 2}");
  }
  c.n_pos = static_cast<int>(std::min<uint64_t>(pos->ne[1], 1u << 30));
  bool std_bias = false, std_scale = false;
  for (const TensorInfo& t : f.tensors()) {
    if (t.name.rfind("v.blk.", 0) == 0) {
      for (const char* suffix : kClampSuffixes) c.clipped_linears |= EndsWith(t.name, suffix);
      c.layer_scale |= EndsWith(t.name, ".out_scale.weight");
    }
    std_bias |= t.name == "v.std_bias";
    std_scale |= t.name == "v.std_scale";
  }
  c.standardize = std_bias && std_scale;
  if (std_bias != std_scale) {
    LogWarn(f.path() + ": has " +
            (std_bias ? "v.std_bias but not v.std_scale" : "v.std_scale but not v.std_bias") +
            "; standardization is off (as in llama.cpp, which uses them only as a pair)");
  }
  c.Validate(f.path());
  return c;
}

void Gemma4VisionConfig::Validate(const std::string& source) const {
  auto invalid = [&source](const std::string& what) {
    Fail(ErrorKind::kInvalidArgument, source + ": gemma4v " + what);
  };
  auto positive = [&](const char* name, int v) {
    if (v <= 0) invalid(std::string(name) + " is " + std::to_string(v) + ", expected > 0");
  };
  positive(mmproj::kVisionEmbeddingLength, n_embd);
  positive(mmproj::kVisionFeedForwardLength, n_ff);
  positive(mmproj::kVisionBlockCount, n_layer);
  positive(mmproj::kVisionHeadCount, n_head);
  positive(mmproj::kVisionHeadCountKv, n_head_kv);
  positive("head_dim", head_dim);
  positive(mmproj::kVisionPatchSize, patch_size);
  positive("pooling (clip.vision.projector.scale_factor)", pooling);
  positive(mmproj::kVisionProjectionDim, n_embd_text);
  positive("position table length (v.position_embd.weight ne[1])", n_pos);
  if (n_head % n_head_kv != 0) {
    invalid("head_count " + std::to_string(n_head) + " is not a multiple of head_count_kv " +
            std::to_string(n_head_kv));
  }
  if (head_dim % 4 != 0 || head_dim > kernels::kMaxHeadDim - 16) {
    invalid("head_dim " + std::to_string(head_dim) +
            " must be a multiple of 4 (two RoPE halves rotated in pairs) and at most " +
            std::to_string(kernels::kMaxHeadDim - 16));
  }
  if (!(eps > 0.0f) || !std::isfinite(eps)) {
    invalid(std::string(mmproj::kVisionLayerNormEps) + " is " + std::to_string(eps) +
            ", expected a positive number");
  }
}

void Gemma4VisionConfig::WriteToGguf(GgufWriter& w) const {
  w.SetBool(mmproj::kHasVision, true);
  w.SetString(mmproj::kVisionProjectorType, "gemma4v");
  w.SetU32(mmproj::kVisionProjectionDim, n_embd_text);
  w.SetU32(mmproj::kVisionImageSize, image_size);
  w.SetU32(mmproj::kVisionPatchSize, patch_size);
  w.SetU32(mmproj::kVisionEmbeddingLength, n_embd);
  w.SetU32(mmproj::kVisionFeedForwardLength, n_ff);
  w.SetU32(mmproj::kVisionBlockCount, n_layer);
  w.SetU32(mmproj::kVisionHeadCount, n_head);
  if (n_head_kv != n_head) w.SetU32(mmproj::kVisionHeadCountKv, n_head_kv);
  if (head_dim * n_head != n_embd) w.SetU32(mmproj::kVisionHeadDim, head_dim);
  w.SetF32(mmproj::kVisionLayerNormEps, eps);
  w.Set(mmproj::kVisionImageMean, GgufValue::Array<float>(image_mean));
  w.Set(mmproj::kVisionImageStd, GgufValue::Array<float>(image_std));
  if (pooling != 3) w.SetU32(mmproj::kVisionScaleFactor, pooling);
  if (use_gelu) w.SetBool(mmproj::kUseGelu, *use_gelu);
  if (use_silu) w.SetBool(mmproj::kUseSilu, *use_silu);
}

VisionActivation Gemma4VisionConfig::Activation(VisionGelu gelu, const std::string& source) const {
  switch (gelu) {
    case VisionGelu::kTanh:
      return VisionActivation::kGeluTanh;
    case VisionGelu::kQuick:
      return VisionActivation::kGeluQuick;
    case VisionGelu::kFromFile:
      break;
  }
  if (use_gelu.value_or(false)) return VisionActivation::kGeluTanh;
  if (use_silu.value_or(false)) {
    Fail(ErrorKind::kUnsupported,
         source +
             ": the file sets clip.use_silu = true (a SiLU FFN); tandem runs GELU only "
             "(choose the tanh or quick GELU explicitly to ignore the flag)");
  }
  return VisionActivation::kGeluQuick;
}

int Gemma4VisionConfig::Tokens(int width, int height) const {
  const int unit = patch_size * pooling;
  auto check = [&](const char* side, int v) {
    if (v <= 0 || v % unit != 0) {
      Fail(ErrorKind::kInvalidArgument,
           std::string("gemma4v: image ") + side + " " + std::to_string(v) +
               " is not a positive multiple of " + std::to_string(unit) + " (patch " +
               std::to_string(patch_size) + " x pooling " + std::to_string(pooling) + ")");
    }
    if (v / patch_size > n_pos) {
      Fail(ErrorKind::kInvalidArgument,
           std::string("gemma4v: image ") + side + " " + std::to_string(v) + " has " +
               std::to_string(v / patch_size) + " patches, more than the position table's " +
               std::to_string(n_pos));
    }
  };
  check("width", width);
  check("height", height);
  return (width / unit) * (height / unit);
}

}  // namespace tandem
