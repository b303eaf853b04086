// Images in tandem-dump-logits' prompt, taken the way `tandem serve` takes them: each file
// decoded and prepared by ImageInput (the size rule, the mmproj's mean and std), encoded by the
// vision tower, and put in place of the vocabulary's image placeholder token by ExpandImages
// (markup and soft-token rows, docs/gemma4.md § Media rows). The prepared pixels can be written
// out as .npy, so that the NumPy reference encodes exactly the same input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/request.h"

namespace tandem {

class Gemma4Model;
class ThreadPool;

struct PromptImageOptions {
  std::string mmproj;
  std::vector<std::string> files;         // PNG, JPEG or WebP, one per placeholder token
  std::string resize = "budget";          // budget | llamacpp (docs/media.md § Target size)
  int budget = 280;                       // budget rule: soft tokens per image
  int min_tokens = 40, max_tokens = 280;  // llamacpp rule
  std::string gelu = "tanh";              // vision FFN activation: tanh | quick | file
  std::string pixels_out;                 // when set: image i's prepared pixels to <this>i.npy
};

// The prompt after expansion: request.prompt holds every row's token (placeholder rows keep the
// placeholder id), request.media each image's begin, count and rows.
struct PromptWithImages {
  EngineRequest request;
  int32_t placeholder = -1;  // the vocabulary's image placeholder token
};

// `tokens` holds the model vocabulary's image placeholder once per file. Throws Error naming the
// file or option at fault.
PromptWithImages ExpandPromptImages(const std::vector<int32_t>& tokens,
                                    const PromptImageOptions& options, const Gemma4Model& model,
                                    ThreadPool& pool);

}  // namespace tandem
