// A loaded Gemma 4 text model (target): config, memory-mapped weights and the forward pass,
// which reads top-down like the model card (docs/gemma4.md § Forward pass).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "kv/kv_cache.h"
#include "model/forward_batch.h"
#include "model/gemma4/config.h"
#include "model/gemma4/weights.h"
#include "model/target_model.h"

namespace tandem {

class GgufFile;
class ThreadPool;

// kDefault follows transformers: causal for models with per-layer embeddings (E2B, E4B),
// bidirectional on the sliding-window layers for the others; kBidirectional (every layer) is
// llama.cpp's rule.
enum class MediaAttention { kDefault, kCausal, kBidirectionalSliding, kBidirectional };

class Gemma4Model final : public TargetModel {
 public:
  struct LoadOptions {
    // Repack the matrices the active kernels read interleaved (Gemma4Weights::Pack): faster
    // matmuls, the same bits, at the cost of a private copy of those weights in RAM.
    bool repack = true;
    // How an image's soft tokens attend to each other (docs/gemma4.md § Media rows).
    MediaAttention media_attention = MediaAttention::kDefault;
  };
  // Opens, validates and binds `path`. Throws Error naming the key or tensor at fault.
  static std::unique_ptr<Gemma4Model> Load(const std::string& path, const LoadOptions& options);
  static std::unique_ptr<Gemma4Model> Load(const std::string& path) {
    return Load(path, LoadOptions());
  }
  ~Gemma4Model() override;

  const Gemma4Config& config() const { return config_; }
  const Gemma4Weights& weights() const { return weights_; }
  const GgufFile& file() const { return *file_; }

  // TargetModel (target_model.h).
  int n_vocab() const override { return config_.n_vocab; }
  int n_embd() const override { return config_.n_embd; }
  std::unique_ptr<KvCache> NewKvCache(const KvCacheOptions& options) const override;
  void Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput& out,
               ThreadPool& pool) const override;
  // Every tensor but the per-layer-embedding table (of which a token reads one row), MoE expert
  // tensors counted for the experts used.
  double BytesPerToken() const override;
  const GgufMetadata& metadata() const override;
  bool MediaBidirectional() const override { return media_attention_ != MediaAttention::kCausal; }
  MediaAttention media_attention() const { return media_attention_; }

  // Scaled token embedding row (E[id] * sqrt(D)): the MTP assistant's input.
  void EmbedToken(int32_t token, float* out) const;

  // Bytes of activation buffers kept from one forward call to the next (see scratch_).
  size_t ScratchBytes() const;

 private:
  Gemma4Model();
  struct Scratch;
  void Layer(int l, int T, const ForwardBatch& batch, Scratch& s, KvCache& cache,
             ThreadPool& pool) const;
  void Attention(int l, int T, const ForwardBatch& batch, Scratch& s, KvCache& cache,
                 ThreadPool& pool) const;
  void MoeFfn(const Gemma4LayerWeights& w, int T, Scratch& s, ThreadPool& pool) const;
  void TreeRows(const ForwardBatch& batch, Scratch& s) const;
  void PerLayerEmbeddings(int T, const ForwardBatch& batch, Scratch& s, ThreadPool& pool) const;
  // out.logits for out.logit_rows from out.hidden (ForwardBatch::logit_tokens: gathered rows).
  void Logits(const ForwardBatch& batch, ForwardOutput& out, ThreadPool& pool) const;

  std::unique_ptr<GgufFile> file_;
  Gemma4Config config_;
  Gemma4Weights weights_;
  std::vector<kernels::Rope> rope_;  // per layer
  // Per layer: the first layer whose Rope equals its own; a forward computes the rotations of
  // its positions once per such layer (Scratch::rope_angles) and the others share them.
  std::vector<int> rope_angles_from_;
  MediaAttention media_attention_ = MediaAttention::kCausal;  // resolved, never kDefault
  // Activations kept from one forward call to the next (calls take turns through the mutex):
  // allocating and zero-filling them anew each call was a visible share of a small model's
  // time, and the first verification after a prefill paid page faults that
  // the speculation planner took for its verify cost. Cut back to BlockScratch::kMinRows rows
  // after a batch of more than BlockScratch::kShrinkAbove rows (Scratch::Shrink).
  mutable std::mutex scratch_mu_;
  mutable std::unique_ptr<Scratch> scratch_;
};

}  // namespace tandem
