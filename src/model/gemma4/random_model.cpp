#include "model/gemma4/random_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "base/error.h"
#include "base/seeded_random.h"
#include "base/thread_pool.h"
#include "gguf/gguf_writer.h"
#include "gguf/llama_file_type.h"
#include "model/gemma4/tensors.h"
#include "model/synthetic_vocab.h"
#include "tensor/quantize.h"

namespace tandem {
namespace {

bool IsPostBranchNorm(const std::string& name) {
  for (const char* s : {"post_attention_norm.weight", "post_ffw_norm.weight", "post_norm.weight"}) {
    if (name.size() > std::strlen(s) &&
        name.compare(name.size() - std::strlen(s), std::string::npos, s) == 0) {
      return true;
    }
  }
  return false;
}

void FillRow(const Gemma4TensorSpec& spec, uint64_t seed, uint64_t row, float epsilon, float* out) {
  const int64_t n = static_cast<int64_t>(spec.ne[0]);
  RowRng rng(seed, row);
  float lo = -1, hi = 1;
  if (epsilon >= 0 && spec.name == "nextn.pre_projection.weight") {
    // Echo drafter: output j copies input j, the first half (the scaled target embedding).
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint64_t>(i) == row ? 1.0f : 0.0f;
    return;
  }
  switch (spec.role) {
    case TensorRole::kMatrix:
    case TensorRole::kEmbedding: {
      // Uniform(-a, a) has variance a^2/3; pick variance 1/n (fan-in, or row length).
      const float a = std::sqrt(3.0f / static_cast<float>(n));
      lo = -a;
      hi = a;
      break;
    }
    case TensorRole::kNorm: {
      // Gains in [0.6, 1.4]; the q/k norms are scaled to RMS head_dim^(-1/4) so attention
      // scores (scale 1.0) have unit variance instead of a sqrt(head_dim) spread that would
      // make the random model amplify rounding noise layer after layer.
      float s = 1.0f;
      if (spec.name.find("attn_q_norm") != std::string::npos ||
          spec.name.find("attn_k_norm") != std::string::npos) {
        s = std::pow(static_cast<float>(n), -0.25f) / 1.0263f;  // 1.0263 = RMS of U(0.6, 1.4)
      }
      if (epsilon >= 0 && IsPostBranchNorm(spec.name)) s = epsilon;
      lo = 0.6f * s;
      hi = 1.4f * s;
      break;
    }
    case TensorRole::kScale:
      lo = 0.5f;
      hi = 1.0f;
      break;
    case TensorRole::kRopeFreqs:
      Fail(ErrorKind::kInternal, "rope_freqs is generated, not random");
  }
  for (int64_t i = 0; i < n; ++i) out[i] = rng.Uniform(lo, hi);
}

// Row `row` of a tensor as written: FillRow's, and with token pairs
// (RandomModelOptions::echo_pair_spread) an odd token embedding row 2k + 1 becomes row 2k plus
// `pair_spread` times its own, so tokens 2k and 2k + 1 score nearly alike under any hidden.
void FillTensorRow(const Gemma4TensorSpec& spec, uint64_t seed, uint64_t row, float epsilon,
                   float pair_spread, float* out) {
  FillRow(spec, seed, row, epsilon, out);
  if (pair_spread < 0 || spec.name != "token_embd.weight" || row % 2 == 0) return;
  const int64_t n = static_cast<int64_t>(spec.ne[0]);
  std::vector<float> base(n);
  FillRow(spec, seed, row - 1, epsilon, base.data());
  for (int64_t i = 0; i < n; ++i) out[i] = base[i] + pair_spread * out[i];
}

bool Quantizable(TensorRole role) {
  return role == TensorRole::kMatrix || role == TensorRole::kEmbedding;
}

// Adds every tensor of `list`: quantizable ones in `wtype` (F32 if the row does not fit its
// blocks), the rest F32; each tensor's values depend only on (seed, name).
void AddRandomTensors(GgufWriter& w, const std::vector<Gemma4TensorSpec>& list,
                      const Gemma4Config& config, const RandomModelOptions& options) {
  const TensorType wtype = options.weight_type;
  const uint32_t block = GetTensorTypeTraits(wtype).block_size;
  for (const Gemma4TensorSpec& spec : list) {
    const TensorType type =
        Quantizable(spec.role) && spec.ne[0] % block == 0 ? wtype : TensorType::kF32;
    if (spec.role == TensorRole::kRopeFreqs) {
      std::vector<float> f = Gemma4RopeFreqs(config);
      std::vector<uint8_t> bytes(f.size() * sizeof(float));
      std::memcpy(bytes.data(), f.data(), bytes.size());
      w.AddTensor(spec.name, TensorType::kF32, spec.ne, std::move(bytes));
      continue;
    }
    const uint64_t seed = SplitMix64(options.seed) ^ HashName(spec.name);
    const float epsilon = options.echo_epsilon, pair_spread = options.echo_pair_spread;
    w.AddTensor(spec.name, type, spec.ne, [=](const GgufByteSink& sink) {
      const int64_t n = static_cast<int64_t>(spec.ne[0]);
      uint64_t rows = 1;
      for (size_t i = 1; i < spec.ne.size(); ++i) rows *= spec.ne[i];
      const size_t row_bytes = RowBytes(GetTensorTypeTraits(type), n);
      const uint64_t chunk_rows = std::max<uint64_t>(1, (8u << 20) / (n * sizeof(float)));
      std::vector<uint8_t> out;
      for (uint64_t r0 = 0; r0 < rows; r0 += chunk_rows) {
        const uint64_t nr = std::min(chunk_rows, rows - r0);
        out.resize(nr * row_bytes);
        GlobalThreadPool().ParallelForRange(nr, [&](size_t b, size_t e, int) {
          std::vector<float> values(n);
          for (size_t r = b; r < e; ++r) {
            FillTensorRow(spec, seed, r0 + r, epsilon, pair_spread, values.data());
            if (type == TensorType::kF32) {
              std::memcpy(out.data() + r * row_bytes, values.data(), row_bytes);
            } else {
              QuantizeRow(type, values.data(), out.data() + r * row_bytes, n);
            }
          }
        });
        sink(out);
      }
    });
  }
}

void CheckWeightType(TensorType wtype) {
  if (wtype != TensorType::kF32 && !CanQuantize(wtype)) {
    Fail(ErrorKind::kUnsupported,
         "mkmodel: cannot write weights of type " + std::string(TensorTypeName(wtype)));
  }
}

void WriteHeader(GgufWriter& w, const RandomModelOptions& options) {
  w.SetString("general.name", options.name);
  w.SetU32("general.file_type", LlamaFileType(options.weight_type));
  w.SetU32("general.quantization_version", 2);
}

}  // namespace

void WriteRandomGemma4(const Gemma4Config& config, const RandomModelOptions& options,
                       const std::string& path) {
  CheckWeightType(options.weight_type);
  GgufWriter w;
  w.SetString("general.architecture", "gemma4");
  WriteHeader(w, options);
  config.WriteToGguf(w);
  WriteVocabToGguf(MakeSyntheticVocab(config.n_vocab), w);
  AddRandomTensors(w, Gemma4TensorList(config), config, options);
  w.Write(path);
}

void WriteRandomGemma4Assistant(const AssistantPreset& preset, const RandomModelOptions& options,
                                const std::string& path) {
  CheckWeightType(options.weight_type);
  const Gemma4Config& c = preset.body;
  const std::string arch = "gemma4-assistant";
  GgufWriter w;
  w.SetString("general.architecture", arch);
  WriteHeader(w, options);
  c.WriteToGguf(w, arch);
  w.SetU32(arch + ".embedding_length_out", preset.n_embd_out);
  w.SetU32(arch + ".nextn_predict_layers", c.n_layer);
  WriteVocabToGguf(MakeSyntheticVocab(c.n_vocab), w);
  std::vector<Gemma4TensorSpec> list = Gemma4TensorList(c);
  const uint64_t D = c.n_embd, B = preset.n_embd_out;
  list.push_back({"nextn.pre_projection.weight", {2 * B, D}, TensorRole::kMatrix, true, -1});
  list.push_back({"nextn.post_projection.weight", {D, B}, TensorRole::kMatrix, true, -1});
  if (preset.n_centroids > 0) {
    const int C = preset.n_centroids;
    w.SetU32(arch + ".num_centroids", C);
    w.SetU32(arch + ".centroid_intermediate_top_k", preset.centroid_top_k);
    list.push_back(
        {"masked_embd_centroids.weight", {D, uint64_t(C)}, TensorRole::kMatrix, true, -1});
    // A seeded permutation of the vocabulary: cluster c owns ordering[c * V/C .. (c+1) * V/C).
    std::vector<int32_t> ordering(c.n_vocab);
    for (int i = 0; i < c.n_vocab; ++i) ordering[i] = i;
    uint64_t state = SplitMix64(options.seed ^ 0x0C1E5u);
    for (int i = c.n_vocab - 1; i > 0; --i) {
      state = SplitMix64(state);
      std::swap(ordering[i], ordering[state % (i + 1)]);
    }
    std::vector<uint8_t> bytes(ordering.size() * sizeof(int32_t));
    std::memcpy(bytes.data(), ordering.data(), bytes.size());
    const uint64_t ne[] = {uint64_t(c.n_vocab)};
    w.AddTensor("masked_embd_ordering", TensorType::kI32, ne, std::move(bytes));
  }
  AddRandomTensors(w, list, c, options);
  w.Write(path);
}

}  // namespace tandem
