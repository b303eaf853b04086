// One encode of the audio tower in pieces: per 30 s mel piece, the subsampling, each conformer
// layer, then the head (output projection, norm, projection into the text width). The engine
// runs one piece per step (engine/request.h MediaJob), so that a recording's encode delays other
// requests' decoding by one layer at a time, not by the whole tower. Running every piece gives
// bitwise what Gemma4AudioEncoder::Encode gives (it is this).
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "encoders/gemma4a/encoder.h"

namespace tandem {

class ThreadPool;

class Gemma4AudioEncoding {
 public:
  // Checks every mel piece (Error(kInvalidArgument) as Encode) before any work. The encoder and
  // the mel values must outlive the encoding.
  Gemma4AudioEncoding(const Gemma4AudioEncoder& encoder,
                      std::span<const Gemma4AudioEncoder::Mel> mel);
  ~Gemma4AudioEncoding();
  Gemma4AudioEncoding(const Gemma4AudioEncoding&) = delete;
  Gemma4AudioEncoding& operator=(const Gemma4AudioEncoding&) = delete;

  // Pieces in all: (n_layer + 2) per mel piece.
  int pieces() const;
  // Pieces run so far.
  int done() const;
  // Runs the next piece; true once the soft tokens are ready (and on every later call).
  bool Step(ThreadPool& pool);
  // The soft tokens, [Σ Tokens][n_embd_out] row-major; valid once Step returned true
  // (Error(kInternal) before), moved out.
  std::vector<float> Take();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace tandem
