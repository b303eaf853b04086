// `tandem convert`: a Hugging Face Gemma 4 checkpoint directory (target or MTP assistant) to one
// GGUF file with the metadata and tensors llama.cpp's converter writes, streamed tensor by tensor;
// for a Gemma4ForConditionalGeneration checkpoint, optionally also its vision and audio towers as
// one llama.cpp mmproj file (docs/vision.md § Conversion from Hugging Face, docs/audio.md
// § Conversion).
#pragma once

#include <cstdint>
#include <string>

#include "tensor/type_traits.h"

namespace tandem {

struct ConvertOptions {
  std::string input_dir;                   // config.json, *.safetensors, tokenizer.json
  std::string output_path;                 // the GGUF to write
  TensorType out_type = TensorType::kF16;  // F32, F16, BF16 or Q8_0 for the matrices
  std::string name;                        // general.name; empty: the directory's name
  bool progress = true;                    // draw a progress bar if stderr is a terminal
  int n_threads = 0;                       // conversion threads; 0 = physical cores
  // Also write the vision tower (gemma4v) and, when the checkpoint has one, the audio tower
  // (gemma4a) here as one mmproj GGUF; empty: text model only.
  std::string mmproj_path;
  bool clip_use_gelu = false;  // with mmproj_path: write clip.use_gelu = true (see VisionGelu)
};

struct ConvertSummary {
  std::string hf_architecture;  // e.g. "Gemma4ForConditionalGeneration"
  std::string gguf_arch;        // "gemma4" or "gemma4-assistant"
  size_t n_tensors = 0;         // GGUF tensors written
  size_t n_multimodal = 0;      // vision/audio tensors skipped
  size_t n_dropped = 0;         // tied lm_head, K/V of KV-shared layers
  size_t n_shards = 0;
  uint64_t tensor_bytes = 0;  // tensor data written
  // With ConvertOptions::mmproj_path:
  size_t n_mmproj_tensors = 0;        // tensors of the mmproj file
  size_t n_mmproj_audio_tensors = 0;  // of them, the audio tower's (0: vision only)
  uint64_t mmproj_bytes = 0;          // its tensor data
};

// Converts options.input_dir into options.output_path (and options.mmproj_path). Memory stays
// bounded by one chunk of rows per thread (the checkpoint is mapped, not loaded). Nothing is
// written until the whole plan checks out (config, tokenizer, every tensor's name, shape and
// dtype, the towers' too when an mmproj is asked for); each file is written to
// `path + ".tmp"` and renamed into place, so a failure never leaves a partial file (an older file
// there survives). Throws Error naming the file, tensor or field at fault (see PlanConversion,
// PlanMmprojConversion, ParseHfConfig, ParseHfVisionConfig, ParseHfAudioConfig,
// SafetensorsCheckpoint::Open, LoadHfTokenizer).
ConvertSummary ConvertHfToGguf(const ConvertOptions& options);

// llama.cpp's `general.file_type` for a conversion to `out_type` (F32 0, F16 1, Q8_0 7, BF16 32).
uint32_t ConvertFileType(TensorType out_type);

}  // namespace tandem
