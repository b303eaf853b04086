// What the engine needs of a target model, and all it may use: evaluate a batch of rows, make a KV
// cache for them, the vocabulary and hidden width of the results, the weight bytes a decode step
// reads (the cost model of speculation), and the file's keys (tokenizer.ggml.suppress_tokens).
// Gemma4Model implements it; a new architecture does too (docs/architecture.md § Adding a model).
#pragma once

#include <memory>

#include "kv/kv_cache.h"
#include "model/forward_batch.h"

namespace tandem {

class GgufMetadata;
class ThreadPool;

class TargetModel {
 public:
  virtual ~TargetModel() = default;

  virtual int n_vocab() const = 0;  // logits per row
  virtual int n_embd() const = 0;   // floats per hidden row of ForwardOutput

  // A KV cache with storage for the model's KV-owning layers.
  virtual std::unique_ptr<KvCache> NewKvCache(const KvCacheOptions& options) const = 0;

  // Evaluates `batch`, appending its K/V to `cache`. Rows of one sequence carry consecutive
  // positions continuing that sequence's cache, in batch order; sequences may interleave. Every
  // row's results are bitwise identical whatever the batch size, the row's place in it and the
  // thread count. Throws Error(kInvalidArgument) for a bad token id, position or sequence,
  // before anything is changed.
  virtual void Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput& out,
                       ThreadPool& pool) const = 0;

  // Whether the rows of one image attend to each other both ways on some layers
  // (ForwardBatch::sees_until); the engine then keeps each image inside one forward.
  virtual bool MediaBidirectional() const { return false; }

  // Bytes of weights one decode step reads.
  virtual double BytesPerToken() const = 0;

  // The model file's metadata keys.
  virtual const GgufMetadata& metadata() const = 0;
};

}  // namespace tandem
