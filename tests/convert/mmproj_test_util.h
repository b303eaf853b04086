// Shared helpers of the mmproj conversion tests (vision and audio towers): a synthetic
// Gemma4ForConditionalGeneration checkpoint written and converted with --mmproj, the configs it
// describes (built from the spec, not by the HF parsers), decoded tensors, broken checkpoints.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/error.h"
#include "convert/converter.h"
#include "encoders/gemma4a/config.h"
#include "encoders/gemma4v/config.h"
#include "gguf/gguf_reader.h"
#include "hf_checkpoint.h"

namespace tandem::testing {

// The vision and audio configs the checkpoint describes.
Gemma4VisionConfig ExpectedVisionConfig(const HfSpec& spec);
Gemma4AudioConfig ExpectedAudioConfig(const HfSpec& spec);

struct Converted {
  HfCheckpoint ckpt;
  std::string hf, text, mmproj;
  ConvertSummary summary;
};

// Convert options for `hf` → `text` and `mmproj` as `type`, 2 threads, no progress bar.
ConvertOptions MmprojOptions(const std::string& hf, const std::string& text,
                             const std::string& mmproj, TensorType type);

// Writes the checkpoint of `spec` (2 shards) under a scratch directory named by `tag` and
// converts it with --mmproj.
Converted ConvertWithMmproj(const HfSpec& spec, TensorType type, const std::string& tag);

// An encoder's output against the NumPy reference's on the HF weights: the same size, the
// reference not vanishing (RMS > 0.1), and max |got - ref| within `bound` of the reference's RMS.
void ExpectCloseToReference(const std::vector<float>& got, const std::vector<double>& ref,
                            double bound);

// Every element of tensor `t` of `f` as f32.
std::vector<float> DecodeTensor(const GgufFile& f, const TensorInfo& t);

// The checkpoint tensor that becomes mmproj tensor `gguf` (a test failure if none).
const HfTensor& ByMmproj(const HfCheckpoint& c, const std::string& gguf);
// The checkpoint tensor named `name` (a test failure if none).
HfTensor& Named(HfCheckpoint& c, const std::string& name);
const HfTensor& Named(const HfCheckpoint& c, const std::string& name);

// The checkpoint of `spec` after `edit`, converted with --mmproj: expects Error of `kind` whose
// message holds every needle, and neither output file.
void ExpectMmprojError(const HfSpec& spec, const std::function<void(HfCheckpoint&)>& edit,
                       ErrorKind kind, const std::vector<std::string>& needles);

}  // namespace tandem::testing
