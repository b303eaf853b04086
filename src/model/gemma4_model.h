// A loaded Gemma 4 text model (target): config, memory-mapped weights and the forward pass,
// which reads top-down like the model card (docs/gemma4.md § Forward pass).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/gemma4_config.h"
#include "model/gemma4_weights.h"

namespace tandem {

class GgufFile;
class ThreadPool;

class Gemma4Model {
 public:
  struct LoadOptions {
    // Repack the matrices the active kernels read interleaved (Gemma4Weights::Pack): faster
    // matmuls, the same bits, at the cost of a private copy of those weights in RAM.
    bool repack = true;
  };
  // Opens, validates and binds `path`. Throws Error naming the key or tensor at fault.
  static std::unique_ptr<Gemma4Model> Load(const std::string& path, const LoadOptions& options);
  static std::unique_ptr<Gemma4Model> Load(const std::string& path) {
    return Load(path, LoadOptions());
  }
  ~Gemma4Model();

  const Gemma4Config& config() const { return config_; }
  const Gemma4Weights& weights() const { return weights_; }
  const GgufFile& file() const { return *file_; }

  // A KV cache with storage for this model's KV-owning layers.
  std::unique_ptr<KvCache> NewKvCache(const KvCacheOptions& options) const;

  // Evaluates `batch`. Rows of one sequence must carry consecutive positions continuing that
  // sequence's cache (the first at cache.Length(seq)), in batch order; sequences may interleave.
  // Appends their K/V to `cache`. Every row's results are bitwise identical whatever the batch
  // size, the row's place in it and the thread count. Throws Error(kInvalidArgument) for a bad
  // token id, position or sequence, before anything is changed.
  void Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput& out,
               ThreadPool& pool) const;

  // Bytes of weights one decode step reads: every tensor but the per-layer-embedding table (of
  // which a token reads one row), MoE expert tensors counted for the experts used.
  double BytesPerToken() const;

  // Scaled token embedding row (E[id] * sqrt(D)): the MTP assistant's input.
  void EmbedToken(int32_t token, float* out) const;

 private:
  Gemma4Model();
  struct Scratch;
  void Layer(int l, int T, const ForwardBatch& batch, Scratch& s, KvCache& cache,
             ThreadPool& pool) const;
  void Attention(int l, int T, const ForwardBatch& batch, Scratch& s, KvCache& cache,
                 ThreadPool& pool) const;
  void DenseFfn(const Gemma4LayerWeights& w, int n_ff, int T, const float* in, float* out,
                Scratch& s, ThreadPool& pool) const;
  void MoeFfn(const Gemma4LayerWeights& w, int T, Scratch& s, ThreadPool& pool) const;
  void PerLayerEmbeddings(int T, const ForwardBatch& batch, Scratch& s, ThreadPool& pool) const;

  std::unique_ptr<GgufFile> file_;
  Gemma4Config config_;
  Gemma4Weights weights_;
  std::vector<kernels::Rope> rope_;  // per layer
};

}  // namespace tandem
