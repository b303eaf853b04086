// Gemma 4 vision tower (projector type gemma4v) hyperparameters: read from an mmproj file's
// `clip.vision.*` keys with llama.cpp's exact types, plus what the tensors say (position-table
// length, clipped linears, standardization), and the options that choose between transformers'
// and llama.cpp's behaviour where they differ (docs/vision.md).
#pragma once

#include <array>
#include <optional>
#include <string>

namespace tandem {

class GgufWriter;
class MmprojFile;

// The FFN activation of the vision tower.
//  kTanh:     GELU with the tanh approximation: transformers' `gelu_pytorch_tanh`, the
//             checkpoint's own activation (default).
//  kQuick:    GELU-quick, x·sigmoid(1.702·x): what llama.cpp runs for Gemma 4 files converted by
//             its converter, which does not write `clip.use_gelu`.
//  kFromFile: llama.cpp's rule: tanh GELU if the file has `clip.use_gelu = true`, GELU-quick
//             otherwise (a file asking for SiLU with `clip.use_silu = true` is refused).
enum class VisionGelu { kTanh, kQuick, kFromFile };

struct VisionOptions {
  VisionGelu gelu = VisionGelu::kTanh;
  // Repack quantized matrices for the active kernel path at load (kernels/matmul_repack.h);
  // the same results either way.
  bool repack = true;
};

// The activation an encoder actually runs (VisionGelu resolved against the file).
enum class VisionActivation { kGeluTanh, kGeluQuick };

struct Gemma4VisionConfig {
  // From the keys (docs/vision.md § Keys).
  int n_embd = 0;        // Dv: clip.vision.embedding_length
  int n_ff = 0;          // FFN width: clip.vision.feed_forward_length
  int n_layer = 0;       // clip.vision.block_count
  int n_head = 0;        // clip.vision.attention.head_count
  int n_head_kv = 0;     // clip.vision.attention.head_count_kv, default n_head
  int head_dim = 0;      // clip.vision.attention.head_dim, default n_embd / n_head
  int patch_size = 16;   // clip.vision.patch_size
  int pooling = 3;       // k: clip.vision.projector.scale_factor, default 3 (written only if not 3)
  int n_embd_text = 0;   // Dt: clip.vision.projection_dim
  int image_size = 224;  // clip.vision.image_size: a placeholder Gemma 4 does not use
  float eps = 1e-6f;     // clip.vision.attention.layer_norm_epsilon (every RMSNorm of the tower)
  std::array<float, 3> image_mean = {0, 0, 0};  // clip.vision.image_mean (preprocessing's)
  std::array<float, 3> image_std = {1, 1, 1};   // clip.vision.image_std
  std::optional<bool> use_gelu;                 // clip.use_gelu as stored (absent: nullopt)
  std::optional<bool> use_silu;                 // clip.use_silu as stored

  // Not keys: fixed by the architecture.
  float rope_theta = 100.0f;

  // Not keys: what the tensors hold (read from the file at load, chosen when generating).
  int n_pos = 0;                 // position-table length S: v.position_embd.weight ne[1]
  bool clipped_linears = false;  // clamp bounds on the layers' linears (E2B/E4B)
  bool standardize = false;      // v.std_bias and v.std_scale (26B/31B)
  bool layer_scale = false;      // v.blk.N.out_scale.weight (accepted by llama.cpp; no real file)

  // Reads and validates the vision keys of `file`, whose vision projector must be gemma4v, and
  // the tensor-derived fields. Throws Error naming the file and key (a missing required key,
  // a key of another type than llama.cpp reads, an inconsistent value).
  static Gemma4VisionConfig FromMmproj(const MmprojFile& file);
  // Writes the keys as llama.cpp's converter does (clip.has_vision_encoder,
  // clip.vision.projector_type = gemma4v, the clip.vision.* keys; the scale factor only when
  // pooling is not 3, clip.use_gelu / use_silu only when set).
  void WriteToGguf(GgufWriter& writer) const;
  // Throws Error(kInvalidArgument) naming `source` and the field when inconsistent (head_dim not
  // a multiple of 4, heads not dividing, sizes not positive, ...).
  void Validate(const std::string& source) const;

  // The activation to run under `gelu`; throws Error(kUnsupported) naming `source` for kFromFile
  // on a file that asks for SiLU.
  VisionActivation Activation(VisionGelu gelu, const std::string& source = "gemma4v") const;

  // Patches per side of an image: width / patch_size. Soft tokens of an image:
  // (width / (patch_size·pooling)) · (height / (patch_size·pooling)). Throws
  // Error(kInvalidArgument) unless both sides are positive multiples of patch_size·pooling with
  // at most n_pos patches per side.
  int Tokens(int width, int height) const;
};

}  // namespace tandem
