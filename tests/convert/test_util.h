// Shared helpers of the conversion tests: scratch directories, conversion with test defaults,
// tandem logits of a GGUF, and the NumPy reference run on a Hugging Face checkpoint.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "convert/converter.h"

namespace tandem::testing {

// A fresh, empty directory under the gtest temp dir, named after the running test and `tag`.
std::string ScratchDir(const std::string& tag);

// Converts `hf_dir` to `out` as `type`, without a progress bar, on `threads` threads.
ConvertSummary Convert(const std::string& hf_dir, const std::string& out, TensorType type,
                       int threads = 0);

// BOS then `n - 1` ordinary token ids spread over the vocabulary (n = 40 runs past the window).
std::vector<int32_t> TestTokens(int n_vocab, int n = 40);

// Logits [T][V] of `tokens` evaluated by tandem in one batch on an f32 KV cache.
std::vector<float> TandemLogits(const std::string& gguf, const std::vector<int32_t>& tokens);

// Runs tests/convert/hf_reference.py with `args` (a command and its operands) and returns the
// float64 values it writes; nullopt when NumPy is unavailable (the caller skips). Fails the
// test if the script fails.
std::optional<std::vector<double>> HfReference(const std::string& args,
                                               const std::vector<int32_t>& tokens);

// The soft tokens [tokens][Dt] of one image (rgb[height][width][3], normalised) from the vision
// tower of the HF checkpoint `hf_dir`, by `hf_reference.py vision`; nullopt without NumPy.
std::optional<std::vector<double>> HfVisionReference(const std::string& hf_dir,
                                                     const std::vector<float>& rgb, int width,
                                                     int height);

// The soft tokens [tokens][Dt] of one piece of log-mel frames (mel[frames][128]) from the audio
// tower of the HF checkpoint `hf_dir`, by `hf_reference.py audio`; nullopt without NumPy.
std::optional<std::vector<double>> HfAudioReference(const std::string& hf_dir,
                                                    const std::vector<float>& mel, int frames);

// Whole-file byte comparison.
std::vector<uint8_t> ReadAll(const std::string& path);

}  // namespace tandem::testing
