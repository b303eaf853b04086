// The pieces a Gemma 4 decoder layer is built from, shared by the target (gemma4_model.cpp) and
// the MTP assistant (gemma4_assistant.cpp): RMSNorm over rows, the attention block around the
// attention step each model does its own way, and the GeGLU feed-forward block
// (docs/gemma4.md § Forward pass). Rows are independent: a row's result never depends on the
// other rows, their number or the thread count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/huge_page_allocator.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "model/gemma4/config.h"
#include "model/gemma4/weights.h"

namespace tandem {

class ThreadPool;

// RMSNorm with a model's epsilon over n_rows contiguous rows, spread over a pool. A row is as wide
// as its gain (per-head norms: rows of head_dim).
class RowNorm {
 public:
  RowNorm(float eps, ThreadPool& pool) : eps_(eps), pool_(pool) {}
  // y = RMSNorm(x) ⊙ gain.
  void Apply(const std::vector<float>& gain, const float* x, int64_t n_rows, float* y) const;
  // x = RMSNorm(x) ⊙ gain.
  void InPlace(const std::vector<float>& gain, float* x, int64_t n_rows) const {
    Apply(gain, x, n_rows, x);
  }
  // y = RMSNorm(x) without a gain, rows of `width` (Gemma 4's V norm and router input).
  void Unscaled(int64_t width, const float* x, int64_t n_rows, float* y) const;

 private:
  float eps_;
  ThreadPool& pool_;
};

// One decoder layer as the blocks read it.
struct DecoderLayer {
  const Gemma4Config& config;
  const Gemma4LayerConfig& layer;
  const Gemma4LayerWeights& weights;
  const kernels::Rope& rope;
  // The batch's rows' rotations by `rope` (Rope::Angles), or null: computed from the positions.
  const float* rope_angles = nullptr;
};

// The blocks' working memory for n rows (grown as needed by GrowRows, never shrunk here).
struct BlockScratch {
  // A buffer grows to at least this many rows at once, so that verification batches of every
  // size up to it find their pages in place: growing a row at a time cost each new size's first
  // forward its page faults, which the speculation planner took for a verify cost and so kept
  // its drafts short.
  // 72: an adaptive round's largest verification, 64 lookup drafts (DraftPlanner::kLookupMax)
  // and the token before them, fits.
  static constexpr int kMinRows = 72;
  // A forward of more rows than this (a prefill) cuts the buffers back to kMinRows rows after
  // it; one of fewer rows keeps what it grew. Cut back after every forward longer than
  // kMinRows, a 65-row one (a full lookup round) faulted its huge pages in again each time.
  static constexpr int kShrinkAbove = 256;

  ActivationBuffer a;         // [n][D] the normed block input
  ActivationBuffer q, att;    // [n][H*hd] queries; attention output before W_o
  ActivationBuffer o;         // [n][D] block output
  ActivationBuffer gate, up;  // [n][n_ff]

  // Every buffer above (a derived scratch adds its own).
  std::vector<ActivationBuffer*> Buffers() { return {&a, &q, &att, &o, &gate, &up}; }
};

// v holds at least max(rows, BlockScratch::kMinRows) rows of `width` floats.
void GrowRows(ActivationBuffer& v, int rows, size_t width);
// v, grown for `rows` rows, is replaced by a fresh vector of BlockScratch::kMinRows of them (its
// pages touched now by the zero fill, not by the next verification).
void ShrinkRows(ActivationBuffer& v, int rows);

// First half of the attention block: a = RMSNorm(x; attn_norm) into s.a, and the queries
// q = RoPE(RMSNorm per head(W_q · a; q_norm)) at `positions` into s.q. `with_queries`: more
// products of `a` (the target's key and value projections) computed in the same job as W_q · a.
void AttentionQueries(const DecoderLayer& layer, int n, const int32_t* positions, const float* x,
                      BlockScratch& s, ThreadPool& pool,
                      std::span<const kernels::MatMulProduct> with_queries = {});
// Second half: x += RMSNorm(W_o · s.att; post_attention_norm).
void AttentionOutput(const DecoderLayer& layer, int n, float* x, BlockScratch& s, ThreadPool& pool);

// The attention block: `attend()` fills s.att [n][H*hd] from s.q (and, for the target, first
// stores the keys and values `with_queries` projected from s.a).
template <class Attend>
void AttentionBlock(const DecoderLayer& layer, int n, const int32_t* positions, float* x,
                    BlockScratch& s, ThreadPool& pool,
                    std::span<const kernels::MatMulProduct> with_queries, Attend&& attend) {
  AttentionQueries(layer, n, positions, x, s, pool, with_queries);
  attend();
  AttentionOutput(layer, n, x, s, pool);
}

// out = W_down · (gelu(W_gate · in) ⊙ (W_up · in)) for n rows of `in` [n][D] (s.gate, s.up
// are its scratch; out may be s.o).
void GeGluFfn(const Gemma4LayerWeights& w, int n, const float* in, float* out, BlockScratch& s,
              ThreadPool& pool);

// The dense feed-forward block: x += RMSNorm(GeGluFfn(RMSNorm(x; ffn_norm)); post_ffw_norm).
void FfnBlock(const DecoderLayer& layer, int n, float* x, BlockScratch& s, ThreadPool& pool);

}  // namespace tandem
