// `tandem quantize in.gguf out.gguf TYPE`: rewrites a GGUF's weights in a llama-quantize preset,
// tensor by tensor, rows spread over the global thread pool (bytes independent of thread count).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "convert/quant_rules.h"

namespace tandem {

struct QuantizeOptions {
  QuantPreset preset = QuantPreset::kQ8_0;
  std::vector<std::string> keep_types;  // tensor names that keep their input type
  int n_threads = 0;                    // 0 = physical cores
  bool allow_requantize = false;        // accept already-quantized inputs (quality loss)
  bool progress = true;                 // draw a progress bar if stderr is a terminal
};

struct QuantizeSummary {
  size_t n_tensors = 0;
  size_t n_converted = 0;  // tensors whose type changed
  size_t n_fallback = 0;   // tensors whose row length forced another type
  uint64_t bytes_in = 0;   // tensor data
  uint64_t bytes_out = 0;
  uint64_t n_elements = 0;
  std::map<std::string, int> type_counts;  // output type name -> tensors
};

// Quantizes `input` into `output`. Metadata is copied, with `general.file_type` set to the
// preset's llama_ftype, `general.quantization_version` = 2, and `split.*` removed. Tensors keep
// their order and names; ChooseQuantTypes picks each type (ChooseMmprojQuantTypes for a
// multimodal projector, general.architecture = clip, which only takes F16, BF16 and Q8_0);
// every changed tensor is decoded to f32
// row by row and re-encoded. Throws Error(kInvalidArgument) for a --keep-type name the file lacks
// or an already-quantized input without allow_requantize, Error(kCorrupt) for a non-finite value
// (naming tensor and row), plus the reader's and writer's errors. The output is written via a
// temporary file and renamed, so a failure leaves no partial file at `output`.
QuantizeSummary QuantizeGguf(const std::string& input, const std::string& output,
                             const QuantizeOptions& options);

// "12.0 MiB -> 3.4 MiB (ratio 0.28, 4.50 bits per weight); q4_K x40, q6_K x5, f32 x30".
std::string FormatQuantizeSummary(const QuantizeSummary& summary);

}  // namespace tandem
