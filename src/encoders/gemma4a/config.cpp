#include "encoders/gemma4a/config.h"

#include <cmath>
#include <string_view>

#include "base/error.h"
#include "encoders/clipped_linear.h"
#include "encoders/mmproj_file.h"
#include "encoders/mmproj_keys.h"
#include "gguf/gguf_writer.h"

namespace tandem {
namespace {

constexpr char kProjector[] = "gemma4a";

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

void RequireKey(const GgufFile& f, const char* key) {
  if (!f.HasKey(key)) {
    Fail(ErrorKind::kNotFound,
         f.path() + ": key '" + key + "' not found (required by the gemma4a audio encoder)");
  }
}

// A u32 key llama.cpp requires, read with its exact type.
int RequireU32(const GgufFile& f, const char* key) {
  RequireKey(f, key);
  const uint32_t v = f.GetU32(key);  // throws naming the key on another type
  if (v > (1u << 30)) {
    Fail(ErrorKind::kInvalidArgument,
         f.path() + ": key '" + key + "' is " + std::to_string(v) + ", which is out of range");
  }
  return static_cast<int>(v);
}

// ne[3] of a required 4-D subsampling conv kernel (its output channels).
int OutputChannels(const GgufFile& f, const char* name) {
  const TensorInfo* t = f.FindTensor(name);
  if (t == nullptr) {
    Fail(ErrorKind::kNotFound, f.path() + ": missing tensor '" + name +
                                   "' {3, 3, C_in, C_out} (required by the gemma4a encoder)");
  }
  return static_cast<int>(std::min<uint64_t>(t->ne[3], 1u << 30));
}

}  // namespace

Gemma4AudioConfig Gemma4AudioConfig::FromMmproj(const MmprojFile& mmproj) {
  mmproj.Require(Modality::kAudio, kProjector);
  const GgufFile& f = mmproj.gguf();
  Gemma4AudioConfig c;
  c.n_embd_text = RequireU32(f, mmproj::kAudioProjectionDim);
  c.n_embd = RequireU32(f, mmproj::kAudioEmbeddingLength);
  c.n_ff = RequireU32(f, mmproj::kAudioFeedForwardLength);
  c.n_layer = RequireU32(f, mmproj::kAudioBlockCount);
  c.n_head = RequireU32(f, mmproj::kAudioHeadCount);
  c.n_mel = RequireU32(f, mmproj::kAudioNumMelBins);
  RequireKey(f, mmproj::kAudioLayerNormEps);
  c.eps = f.GetF32(mmproj::kAudioLayerNormEps);  // throws naming the key on another type

  c.sub_channels0 = OutputChannels(f, "a.conv1d.0.weight");
  c.sub_channels1 = OutputChannels(f, "a.conv1d.1.weight");
  const TensorInfo* out = f.FindTensor("a.pre_encode.out.weight");
  c.n_out = out == nullptr ? 0 : static_cast<int>(std::min<uint64_t>(out->ne[1], 1u << 30));
  for (const TensorInfo& t : f.tensors()) {
    if (t.name.rfind("a.blk.", 0) != 0) continue;
    for (const char* suffix : kClampSuffixes) c.clipped_linears |= EndsWith(t.name, suffix);
  }
  c.Validate(f.path());
  return c;
}

void Gemma4AudioConfig::Validate(const std::string& source) const {
  auto invalid = [&source](const std::string& what) {
    Fail(ErrorKind::kInvalidArgument, source + ": gemma4a " + what);
  };
  auto positive = [&](const char* name, int v) {
    if (v <= 0) invalid(std::string(name) + " is " + std::to_string(v) + ", expected > 0");
  };
  positive(mmproj::kAudioEmbeddingLength, n_embd);
  positive(mmproj::kAudioFeedForwardLength, n_ff);
  positive(mmproj::kAudioBlockCount, n_layer);
  positive(mmproj::kAudioHeadCount, n_head);
  positive(mmproj::kAudioNumMelBins, n_mel);
  positive(mmproj::kAudioProjectionDim, n_embd_text);
  positive("subsampling channels (a.conv1d.0.weight ne[3])", sub_channels0);
  positive("subsampling channels (a.conv1d.1.weight ne[3])", sub_channels1);
  if (n_out < 0) invalid("output width " + std::to_string(n_out) + " is negative");
  if (n_embd % n_head != 0) {
    invalid(std::string(mmproj::kAudioEmbeddingLength) + " " + std::to_string(n_embd) +
            " is not a multiple of " + mmproj::kAudioHeadCount + " " + std::to_string(n_head));
  }
  if (n_embd % 2 != 0) {
    invalid(std::string(mmproj::kAudioEmbeddingLength) + " " + std::to_string(n_embd) +
            " is odd (the relative position vectors are sine and cosine halves)");
  }
  if (!(eps > 0.0f) || !std::isfinite(eps)) {
    invalid(std::string(mmproj::kAudioLayerNormEps) + " is " + std::to_string(eps) +
            ", expected a positive number");
  }
}

void Gemma4AudioConfig::WriteToGguf(GgufWriter& w) const {
  w.SetBool(mmproj::kHasAudio, true);
  w.SetString(mmproj::kAudioProjectorType, kProjector);
  w.SetU32(mmproj::kAudioProjectionDim, n_embd_text);
  w.SetU32(mmproj::kAudioEmbeddingLength, n_embd);
  w.SetU32(mmproj::kAudioFeedForwardLength, n_ff);
  w.SetU32(mmproj::kAudioBlockCount, n_layer);
  w.SetU32(mmproj::kAudioHeadCount, n_head);
  w.SetF32(mmproj::kAudioLayerNormEps, eps);
  w.SetU32(mmproj::kAudioNumMelBins, n_mel);
}

}  // namespace tandem
