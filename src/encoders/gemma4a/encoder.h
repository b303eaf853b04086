// The Gemma 4 audio tower (gemma4a, a conformer): log-mel features -> soft tokens for the text
// model, one per 40 ms (docs/audio.md § The forward pass). Runs on the shared kernels with
// F32/F16/BF16/Q8_0 (any type MatMul reads) weights.
//
// Numerics: every soft token is bitwise identical whatever the thread count and whatever other
// pieces share the call: the linears run row by row (kernels::MatMul / MatMulPanels), and the
// attention, the depthwise convolution and the activations run per row (and head) in a fixed
// order. A recording longer than 30 s arrives as several mel pieces; each is encoded on its own,
// as llama.cpp does, and their soft tokens are concatenated.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "encoders/gemma4a/config.h"
#include "encoders/gemma4a/weights.h"

namespace tandem {

class MmprojFile;
class ThreadPool;

struct AudioEncoderOptions {
  // Repack quantized matrices for the active kernel path at load (kernels/matmul_repack.h); the
  // same results either way.
  bool repack = true;
};

class Gemma4AudioEncoder {
 public:
  // Loads the audio tower of the mmproj file at `path` (Error if it has none, if it is not
  // gemma4a, or on any bad key or tensor; see Gemma4AudioConfig::FromMmproj and
  // Gemma4AudioWeights::Bind).
  static std::unique_ptr<Gemma4AudioEncoder> Load(const std::string& path,
                                                  const AudioEncoderOptions& options = {});
  // The same from an opened file, which the encoder keeps alive.
  static std::unique_ptr<Gemma4AudioEncoder> Load(std::shared_ptr<const MmprojFile> file,
                                                  const AudioEncoderOptions& options = {});

  const Gemma4AudioConfig& config() const { return config_; }
  const Gemma4AudioWeights& weights() const { return weights_; }
  // Width of a soft token: the text model's hidden size Dt.
  int n_embd_out() const { return config_.n_embd_text; }
  // Soft tokens of a piece of n_frames mel frames: ceil(ceil(n_frames / 2) / 2).
  static int Tokens(int n_frames);

  // One piece of log-mel features: mel[frames][config().n_mel], frames >= 1 (at most 30 s,
  // 3000 frames, is what the front end makes; longer pieces are encoded as given).
  struct Mel {
    const float* values = nullptr;
    int frames = 0;
  };

  // The soft tokens of all pieces, concatenated: [Σ Tokens(frames)][n_embd_out()] row-major.
  // Throws Error(kInvalidArgument) for a piece without values or frames, before any work.
  std::vector<float> Encode(std::span<const Mel> pieces, ThreadPool& pool) const;

 private:
  Gemma4AudioEncoder(std::shared_ptr<const MmprojFile> file, Gemma4AudioConfig config,
                     Gemma4AudioWeights weights)
      : file_(std::move(file)), config_(std::move(config)), weights_(std::move(weights)) {}

  std::shared_ptr<const MmprojFile> file_;
  Gemma4AudioConfig config_;
  Gemma4AudioWeights weights_;
};

}  // namespace tandem
