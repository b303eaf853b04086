// One encode of the vision tower in pieces: the patch embedding, each layer, then pooling and
// the projection. The engine runs one piece per step (engine/request.h MediaJob), so that an
// image's encode delays other requests' decoding by one layer at a time, not by the whole tower.
// Running every piece gives bitwise what Gemma4VisionEncoder::EncodeBatch gives (it is this).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "encoders/gemma4v/encoder.h"

namespace tandem {

class ThreadPool;

class Gemma4VisionEncoding {
 public:
  // Checks every image's size (Error(kInvalidArgument) as EncodeBatch) before any work. The
  // encoder and the images' pixels must outlive the encoding.
  Gemma4VisionEncoding(const Gemma4VisionEncoder& encoder,
                       std::span<const Gemma4VisionEncoder::Image> images);
  ~Gemma4VisionEncoding();
  Gemma4VisionEncoding(const Gemma4VisionEncoding&) = delete;
  Gemma4VisionEncoding& operator=(const Gemma4VisionEncoding&) = delete;

  // Pieces in all: the patch embedding, n_layer layers, pooling and projection.
  int pieces() const;
  // Pieces run so far.
  int done() const;
  // Runs the next piece; true once the soft tokens are ready (and on every later call).
  bool Step(ThreadPool& pool);
  // The soft tokens of each image, [Tokens][n_embd_out] row-major; valid once Step returned
  // true (Error(kInternal) before), moved out.
  std::vector<std::vector<float>> Take();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace tandem
