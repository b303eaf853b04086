// Images and recordings in tandem-dump-logits' prompt, taken the way `tandem serve` takes them:
// each image decoded and prepared by ImageInput (the size rule, the mmproj's mean and std) and
// encoded by the vision tower; each recording decoded, resampled and cut into log-mel pieces by
// AudioInput and encoded by the audio tower. ExpandMedia puts them in place of the vocabulary's
// placeholder tokens (markup and soft-token rows, docs/gemma4.md § Media rows). The prepared
// pixels can be written out as .npy, so that the NumPy reference encodes exactly the same input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/request.h"

namespace tandem {

class Gemma4Model;
class ThreadPool;

struct PromptMediaOptions {
  std::string mmproj;
  std::vector<std::string> images;        // PNG, JPEG or WebP, one per image placeholder token
  std::vector<std::string> audio;         // WAV, MP3 or FLAC, one per audio placeholder token
  std::string resize = "budget";          // budget | llamacpp (docs/media.md § Target size)
  int budget = 280;                       // budget rule: soft tokens per image
  int min_tokens = 40, max_tokens = 280;  // llamacpp rule
  std::string gelu = "tanh";              // vision FFN activation: tanh | quick | file
  std::string pixels_out;                 // when set: image i's prepared pixels to <this>i.npy
};

// The prompt after expansion: request.prompt holds every row's token (placeholder rows keep the
// placeholder id), request.media each item's begin, count, rows and modality (audio: causal).
struct PromptWithMedia {
  EngineRequest request;
};

// `tokens` holds the model vocabulary's image placeholder once per image file and, when there
// are recordings, its audio placeholder once per recording. Throws Error naming the file or
// option at fault.
PromptWithMedia ExpandPromptMedia(const std::vector<int32_t>& tokens,
                                  const PromptMediaOptions& options, const Gemma4Model& model,
                                  ThreadPool& pool);

}  // namespace tandem
