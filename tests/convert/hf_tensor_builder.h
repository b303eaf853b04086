// Internal to the synthetic Hugging Face checkpoints (hf_checkpoint.cpp): the tensor builder that
// draws each tensor's values from the spec's seed and its name, and the vision and audio towers'
// parameters (hf_checkpoint_towers.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "convert/safetensors_test_util.h"
#include "hf_checkpoint.h"

namespace tandem::testing::hf_build {

inline uint64_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

inline uint64_t Hash(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

enum class Kind {
  kMatrix,
  kNorm,
  kQkNorm,
  kScale,
  kTable,
  kClampMin,
  kClampMax,
  kInfinity,
  kNegInfinity
};

class Builder {
 public:
  explicit Builder(const HfSpec& spec) : spec_(spec) {}

  // A float tensor of `shape` with values of `kind`, rounded to the spec's dtype.
  void Add(const std::string& name, const std::string& gguf, std::vector<uint64_t> shape, Kind kind,
           int half = 0) {
    HfTensor t{name, gguf, half, spec_.dtype, std::move(shape), {}, {}, "", false};
    uint64_t n = 1;
    for (uint64_t d : t.shape) n *= d;
    uint64_t state = Mix(spec_.seed ^ Hash(name));
    auto uniform = [&state](float lo, float hi) {
      state = Mix(state);
      return lo + (hi - lo) * static_cast<float>(state >> 40) * (1.0f / 16777216.0f);
    };
    const float fan_in = static_cast<float>(t.shape.empty() ? 1 : t.shape.back());
    const float a = std::sqrt(3.0f / fan_in);
    // q/k norms with RMS head_dim^-1/4 keep attention scores near unit variance (as the random
    // GGUF models do), so float rounding noise does not grow layer after layer.
    const float qk = std::pow(fan_in, -0.25f) / 1.0263f;
    t.values.resize(n);
    for (float& v : t.values) {
      switch (kind) {
        case Kind::kMatrix:
          v = uniform(-a, a);
          break;
        case Kind::kNorm:
          v = uniform(0.6f, 1.4f);
          break;
        case Kind::kQkNorm:
          v = uniform(0.6f, 1.4f) * qk;
          break;
        case Kind::kScale:
          v = uniform(0.5f, 1.0f);
          break;
        case Kind::kTable:
          v = uniform(-0.5f, 0.5f);
          break;
        case Kind::kClampMin:  // magnitudes in [1, 3]: some bite on unit-RMS activations
          v = -uniform(1.0f, 3.0f);
          break;
        case Kind::kClampMax:
          v = uniform(1.0f, 3.0f);
          break;
        case Kind::kInfinity:  // transformers' initial value of a bound
          v = std::numeric_limits<float>::infinity();
          break;
        case Kind::kNegInfinity:
          v = -std::numeric_limits<float>::infinity();
          break;
      }
      v = RoundTo(v, spec_.dtype);
    }
    tensors_.push_back(std::move(t));
  }
  // A vision or audio tensor: skipped by the text GGUF, `mmproj` in the projector (or empty).
  void AddMultimodal(const std::string& name, const std::string& mmproj,
                     std::vector<uint64_t> shape, Kind kind) {
    Add(name, "", std::move(shape), kind);
    tensors_.back().mmproj = mmproj;
    tensors_.back().multimodal = true;
  }
  void AddInts(const std::string& name, const std::string& gguf, std::vector<int64_t> ints) {
    const uint64_t n = ints.size();
    tensors_.push_back({name, gguf, 0, "I64", {n}, {}, std::move(ints), "", false});
  }
  std::vector<HfTensor> Take() { return std::move(tensors_); }

 private:
  const HfSpec& spec_;
  std::vector<HfTensor> tensors_;
};

// transformers' Gemma4VisionModel / Gemma4AudioModel parameters with their mmproj names, and
// their config.json sections (hf_checkpoint_towers.cpp).
void AddVisionTower(const HfSpec& s, Builder& b);
void AddAudioTower(const HfSpec& s, Builder& b);
nlohmann::json VisionConfig(const HfVisionSpec& v);
nlohmann::json AudioConfig(const HfAudioSpec& a);

}  // namespace tandem::testing::hf_build
