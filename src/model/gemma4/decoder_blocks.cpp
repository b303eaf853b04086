#include "model/gemma4/decoder_blocks.h"

#include <algorithm>
#include <array>

#include "base/error.h"
#include "kernels/matmul.h"

namespace tandem {

void GrowRows(ActivationBuffer& v, int rows, size_t width) {
  // kMinRows rows whatever `rows`: a buffer shared by layers of different widths (E2B's wider
  // FFN layers) holds them for the widest, not only for the first width it saw.
  const size_t need = static_cast<size_t>(std::max(rows, BlockScratch::kMinRows)) * width;
  if (v.size() < need) v.resize(need);
}

void ShrinkRows(ActivationBuffer& v, int rows) {
  ActivationBuffer(v.size() / rows * BlockScratch::kMinRows).swap(v);
}

void RowNorm::Apply(const std::vector<float>& gain, const float* x, int64_t n_rows,
                    float* y) const {
  const size_t width = gain.size();
  kernels::RmsNormRows(x, width, gain.data(), eps_, static_cast<int64_t>(width), n_rows, y, width,
                       &pool_);
}

void RowNorm::Unscaled(int64_t width, const float* x, int64_t n_rows, float* y) const {
  const size_t stride = static_cast<size_t>(width);
  kernels::RmsNormRows(x, stride, nullptr, eps_, width, n_rows, y, stride, &pool_);
}

void AttentionQueries(const DecoderLayer& layer, int n, const int32_t* positions, const float* x,
                      BlockScratch& s, ThreadPool& pool,
                      std::span<const kernels::MatMulProduct> with_queries) {
  const Gemma4Config& c = layer.config;
  const Gemma4LayerWeights& w = layer.weights;
  const RowNorm norm(c.rms_eps, pool);
  const size_t D = c.n_embd, qd = static_cast<size_t>(c.n_head) * layer.layer.head_dim;
  GrowRows(s.a, n, D);
  GrowRows(s.q, n, qd);
  GrowRows(s.att, n, qd);
  norm.Apply(w.attn_norm, x, n, s.a.data());
  std::array<kernels::MatMulProduct, 3> products{{{&w.attn_q, s.q.data()}}};
  if (with_queries.size() > products.size() - 1) {
    Fail(ErrorKind::kInvalidArgument, "AttentionQueries: more than two products beside W_q");
  }
  std::copy(with_queries.begin(), with_queries.end(), products.begin() + 1);
  kernels::MatMulEach({products.data(), with_queries.size() + 1}, s.a.data(), n, pool);
  norm.InPlace(w.attn_q_norm, s.q.data(), static_cast<int64_t>(n) * c.n_head);
  if (layer.rope_angles != nullptr) {
    layer.rope.ApplyAngles(s.q.data(), n, qd, c.n_head, layer.rope_angles);
  } else {
    layer.rope.Apply(s.q.data(), n, qd, c.n_head, positions);
  }
}

void AttentionOutput(const DecoderLayer& layer, int n, float* x, BlockScratch& s,
                     ThreadPool& pool) {
  const Gemma4Config& c = layer.config;
  const Gemma4LayerWeights& w = layer.weights;
  const size_t D = c.n_embd;
  GrowRows(s.o, n, D);
  kernels::MatMul(w.attn_output, s.att.data(), n, s.o.data(), pool);
  RowNorm(c.rms_eps, pool).InPlace(w.post_attention_norm, s.o.data(), n);
  kernels::Add(x, s.o.data(), static_cast<int64_t>(n * D), x);
}

void GeGluFfn(const Gemma4LayerWeights& w, int n, const float* in, float* out, BlockScratch& s,
              ThreadPool& pool) {
  const size_t size = static_cast<size_t>(n) * w.ffn_gate.rows;
  GrowRows(s.gate, n, w.ffn_gate.rows);
  GrowRows(s.up, n, w.ffn_gate.rows);
  const kernels::MatMulProduct gate_up[] = {{&w.ffn_gate, s.gate.data()}, {&w.ffn_up, s.up.data()}};
  kernels::MatMulEach(gate_up, in, n, pool);
  kernels::GeGlu(s.gate.data(), s.up.data(), static_cast<int64_t>(size), s.gate.data(), pool);
  kernels::MatMul(w.ffn_down, s.gate.data(), n, out, pool);
}

void FfnBlock(const DecoderLayer& layer, int n, float* x, BlockScratch& s, ThreadPool& pool) {
  const Gemma4Config& c = layer.config;
  const Gemma4LayerWeights& w = layer.weights;
  const RowNorm norm(c.rms_eps, pool);
  const size_t D = c.n_embd;
  GrowRows(s.a, n, D);
  GrowRows(s.o, n, D);
  norm.Apply(w.ffn_norm, x, n, s.a.data());
  GeGluFfn(w, n, s.a.data(), s.o.data(), s, pool);
  norm.InPlace(w.post_ffw_norm, s.o.data(), n);
  kernels::Add(x, s.o.data(), static_cast<int64_t>(n * D), x);
}

}  // namespace tandem
