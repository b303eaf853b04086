// The flags shared by run, bench and serve (names follow llama.cpp's), declared once, and the
// loading of the target, its drafter and its tokenizer from them.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "encoders/gemma4a/encoder.h"
#include "encoders/gemma4v/encoder.h"
#include "kv/kv_cache.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/target.h"
#include "multimodal/audio_input.h"
#include "multimodal/image_input.h"
#include "sampling/sampling_params.h"
#include "speculative/drafter_set.h"
#include "speculative/spec_options.h"
#include "tokenizer/tokenizer.h"

namespace tandem::cli {

struct ModelOptions {
  std::string model;
  std::string model_draft;
  std::string spec_type = "auto";  // auto: the loaded drafter (mtp, draft), none without -md
  std::string draft_head = "auto";
  int draft_max = SpecOptions{}.draft_max;
  int draft_min = SpecOptions{}.draft_min;
  float draft_p_min = SpecOptions{}.draft_p_min;
  bool no_adaptive = !SpecOptions{}.adaptive;
  int draft_tree = SpecOptions{}.tree_width;
  int ngram_min = SpecOptions{}.ngram_min;
  int ngram_max = SpecOptions{}.ngram_max;
  // --spec-suffix-mib: the suffix index's footprint limit (suffix drafting, suffix_index.h).
  size_t suffix_mib = kDefaultSuffixIndexBytes >> 20;
  int ctx_size = 4096;
  int batch_size = 512;
  int threads = 0;
  std::string cache_type_k = "f16";
  std::string cache_type_v;  // empty: same as -ctk
  bool no_repack = false;    // keep every weight in the mapping (no interleaved copies)
  bool no_warmup = false;    // no EngineOptions::warmup
  // Images and audio (docs/media.md, docs/audio.md, docs/gemma4.md § Media rows).
  std::string mmproj;  // -mm: the projector file (llama.cpp's mmproj GGUF): vision and/or audio
  std::string image_attention = "auto";  // auto, causal, bidirectional, bidirectional-sliding
  std::string image_resize = "budget";   // budget (transformers) or llamacpp
  int image_budget = 280;                // budget: soft tokens an image fills
  int image_min_tokens = 40;             // llamacpp: the range of soft tokens
  int image_max_tokens = 280;
  int image_max_count = 16;             // images per request
  int audio_max_count = 8;              // audio parts per request
  std::string audio_log_floor = "add";  // add: ln(mel + 0.001) (transformers), clamp (llama.cpp)
  std::string vision_gelu = "tanh";     // tanh (transformers), quick, file (llama.cpp's rule)
};

// Adds -m, -md, -mm, the --image-* and --audio-* options, --vision-gelu, --spec-type,
// --spec-ngram-min/max, --spec-suffix-mib, --draft-*, -c, -b, -t, -ctk/-ctv, --no-repack,
// --no-warmup to `app`.
void AddModelFlags(CLI::App& app, ModelOptions& options);
// Adds --temp, --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n,
// --presence-penalty, --frequency-penalty, -s/--seed.
void AddSamplingFlags(CLI::App& app, SamplingParams& params);

struct LoadedModels {
  std::unique_ptr<Gemma4Model> target;
  std::unique_ptr<Gemma4VisionEncoder> vision;        // -mm
  std::unique_ptr<ImageInput> images;                 // with vision: bytes to prompt media
  std::unique_ptr<Gemma4AudioEncoder> audio_encoder;  // -mm with an audio tower (E2B, E4B)
  std::unique_ptr<AudioInput> audio;                  // with it: bytes to prompt media
  std::unique_ptr<Gemma4Assistant> assistant;
  std::unique_ptr<Gemma4Model> draft_model;  // --spec-type draft
  std::unique_ptr<Tokenizer> tokenizer;
  std::unique_ptr<ThreadPool> pool;
  SpecOptions spec;
  size_t suffix_index_bytes = kDefaultSuffixIndexBytes;  // --spec-suffix-mib
  KvCacheOptions kv;
  double load_ms = 0;
  size_t mapped_bytes = 0;  // weights mapped (target + drafter files)
  size_t packed_bytes = 0;  // interleaved weight copies in RAM (0 with --no-repack)

  // The drafters of what is loaded (MakeDrafters), for a Generator or an Engine.
  DrafterSet Drafters() const;
};

// Loads what `options` names and resolves the speculation settings. Warns (loudly) when a flag
// cannot have an effect: draft flags without a drafter, a drafter with speculation off.
LoadedModels LoadModels(const ModelOptions& options, const CLI::App& app);

// Resident set size of this process in bytes (0 if unknown).
size_t ResidentBytes();

}  // namespace tandem::cli
