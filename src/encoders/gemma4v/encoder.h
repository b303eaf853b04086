// The Gemma 4 vision tower (gemma4v): pixels -> soft tokens for the text model
// (docs/vision.md § The encoder). Runs on the shared kernels with F32/F16/BF16/Q8_0 (any type
// MatMul reads) weights.
//
// Numerics: every soft token is bitwise identical whatever the thread count, the kernel chunking
// and whatever other images share the call: the linear parts run row by row over the patches of
// all images together, attention runs per (patch, head) over the patches of that patch's own
// image (kernels::AttentionDense, each row's scores and sums in a fixed order), and pooling
// sums each cell's patches in a fixed order.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "encoders/gemma4v/config.h"
#include "encoders/gemma4v/weights.h"

namespace tandem {

class MmprojFile;
class ThreadPool;

class Gemma4VisionEncoder {
 public:
  // Loads the vision tower of the mmproj file at `path` (Error if it has none, if it is not
  // gemma4v, or on any bad key or tensor; see Gemma4VisionConfig::FromMmproj and
  // Gemma4VisionWeights::Bind).
  static std::unique_ptr<Gemma4VisionEncoder> Load(const std::string& path,
                                                   const VisionOptions& options = {});
  // The same from an opened file, which the encoder keeps alive.
  static std::unique_ptr<Gemma4VisionEncoder> Load(std::shared_ptr<const MmprojFile> file,
                                                   const VisionOptions& options = {});

  const Gemma4VisionConfig& config() const { return config_; }
  const Gemma4VisionWeights& weights() const { return weights_; }
  VisionActivation activation() const { return activation_; }
  // Width of a soft token: the text model's hidden size Dt.
  int n_embd_out() const { return config_.n_embd_text; }
  // Soft tokens of a width x height image; throws like Gemma4VisionConfig::Tokens.
  int Tokens(int width, int height) const { return config_.Tokens(width, height); }

  // An image: rgb[height][width][3] floats already normalised ((x/255 - mean) / std, in [0, 1]
  // for Gemma 4's mean 0 and std 1); width and height positive multiples of
  // patch_size · pooling (48).
  struct Image {
    const float* rgb = nullptr;
    int width = 0;
    int height = 0;
  };

  // The soft tokens of one image: [Tokens(width, height)][n_embd_out()] row-major, the pooled
  // grid in row-major order. Throws Error(kInvalidArgument) for a bad size or a null image.
  std::vector<float> Encode(const float* rgb, int width, int height, ThreadPool& pool) const;
  // Several images in one pass (their patches share every matmul); result i is bitwise
  // Encode(images[i]). All sizes are checked before any work.
  std::vector<std::vector<float>> EncodeBatch(std::span<const Image> images,
                                              ThreadPool& pool) const;

  // Patch rows processed together between attention and the FFN (bounds the scratch; any
  // value gives the same bits).
  static constexpr int kChunkRows = 256;

 private:
  Gemma4VisionEncoder(std::shared_ptr<const MmprojFile> file, Gemma4VisionConfig config,
                      Gemma4VisionWeights weights, VisionActivation activation)
      : file_(std::move(file)),
        config_(std::move(config)),
        weights_(std::move(weights)),
        activation_(activation) {}

  std::shared_ptr<const MmprojFile> file_;
  Gemma4VisionConfig config_;
  Gemma4VisionWeights weights_;
  VisionActivation activation_;
};

}  // namespace tandem
