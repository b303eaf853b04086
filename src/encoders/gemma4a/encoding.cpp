#include "encoders/gemma4a/encoding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "base/error.h"
#include "base/huge_page_allocator.h"
#include "base/thread_pool.h"
#include "encoders/gemma4a/subsampling.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"

namespace tandem {
namespace {

using Mel = Gemma4AudioEncoder::Mel;
using Config = Gemma4AudioConfig;

// A query sees itself and the keys before it up to this distance: transformers' window of
// attention_context_left - 1 = 12 keys (distances 0 to 11). Its relative table also holds
// distance 12, which that window always masks.
constexpr int kMaxDistance = Config::kContextLeft - 2;
constexpr int kDistances = kMaxDistance + 1;

// The sinusoidal vector of each distance d < n: [n][D], sines then cosines of d·τ_i with
// τ_i = exp(-i·ln(10000) / (D/2 - 1)), i < D/2. Computed in double and rounded once, so the
// same on every ISA.
std::vector<float> DistanceVectors(int n, int D) {
  const int half = D / 2;
  const double step = std::log(10000.0) / std::max(half - 1, 1);
  std::vector<float> pe(static_cast<size_t>(n) * D);
  for (int d = 0; d < n; ++d) {
    for (int i = 0; i < half; ++i) {
      const double angle = d * std::exp(-i * step);
      pe[static_cast<size_t>(d) * D + i] = static_cast<float>(std::sin(angle));
      pe[static_cast<size_t>(d) * D + half + i] = static_cast<float>(std::cos(angle));
    }
  }
  return pe;
}

// a·b over n values in eight interleaved partial sums, added pairwise: one fixed order (which the
// compiler can keep in vector registers), whatever the thread or row.
float Dot(const float* a, const float* b, int n) {
  float s[8] = {};
  int d = 0;
  for (; d + 8 <= n; d += 8) {
    for (int j = 0; j < 8; ++j) s[j] += a[d + j] * b[d + j];
  }
  for (; d < n; ++d) s[d % 8] += a[d] * b[d];
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

// Runs fn(row) for every row in [0, n) over the pool.
template <typename Fn>
void ForRows(int64_t n, ThreadPool& pool, const Fn& fn) {
  pool.ParallelForRange(static_cast<size_t>(n), [&](size_t begin, size_t end, int) {
    for (size_t r = begin; r < end; ++r) fn(static_cast<int64_t>(r));
  });
}

}  // namespace

struct Gemma4AudioEncoding::State {
  const Gemma4AudioEncoder& encoder;
  std::vector<Mel> mel;
  int done = 0;
  int64_t T = 0;           // rows of the piece being encoded
  std::vector<float> pe;   // [kDistances][Da] distance vectors
  std::vector<float> rel;  // [kDistances][Da] the layer's projected distance vectors
  // Working rows of a piece (tens of MB for 30 s): ActivationBuffers, so that each new encoding
  // maps them in 2 MiB pages instead of faulting in 4 KiB ones.
  ActivationBuffer x;  // the residual stream [T][Da]
  ActivationBuffer h, q, k, v, a, o, wide;
  std::vector<float> clamp;
  std::vector<float> out;  // soft tokens of the pieces done so far

  State(const Gemma4AudioEncoder& enc, std::span<const Mel> pieces)
      : encoder(enc), mel(pieces.begin(), pieces.end()) {
    for (size_t i = 0; i < mel.size(); ++i) {
      if (mel[i].values == nullptr || mel[i].frames < 1) {
        Fail(ErrorKind::kInvalidArgument, "gemma4a: mel piece " + std::to_string(i) + " has " +
                                              std::to_string(mel[i].frames) +
                                              " frames, expected at least 1");
      }
    }
    pe = DistanceVectors(kDistances, enc.config().n_embd);
  }

  // dst = RMSNorm(src) with `gain`, or a copy when the file has no such norm (llama.cpp skips
  // it); then clamped to the input bounds of `next` when given, each row while it is in cache,
  // so that `next` runs with ClippedInput::kClamped.
  void Norm(const float* src, const std::vector<float>& gain, float* dst, ThreadPool& pool,
            const ClippedLinear* next = nullptr) const {
    const int D = encoder.config().n_embd;
    ForRows(T, pool, [&](int64_t t) {
      const float* s = src + t * D;
      float* d = dst + t * D;
      if (!gain.empty()) {
        kernels::RmsNorm(s, gain.data(), Config::kNormEps, D, d);
      } else if (d != s) {
        std::memcpy(d, s, static_cast<size_t>(D) * sizeof(float));
      }
      if (next != nullptr) ClampToInput(*next, d, D);
    });
  }

  // x += s·RMSNorm(o) with `gain` (o itself when there is none), a row at a time (each value
  // computed the same wherever: the norm, kernels::Scale, then kernels::Add); s = 1 skips the
  // scaling. o is overwritten.
  void AddResidual(float* o, const std::vector<float>& gain, float s, ThreadPool& pool) {
    const int D = encoder.config().n_embd;
    ForRows(T, pool, [&](int64_t t) {
      float* xr = x.data() + t * D;
      float* orow = o + t * D;
      if (!gain.empty()) {
        kernels::RmsNorm(orow, gain.data(), Config::kNormEps, D, orow);
      }
      if (s != 1.0f) kernels::Scale(orow, s, D, orow);
      kernels::Add(xr, orow, D, xr);
    });
  }

  void Subsample(int piece, ThreadPool& pool);
  void FeedForward(const std::vector<float>& pre, const ClippedLinear& up_w,
                   const ClippedLinear& down_w, const std::vector<float>& post, ThreadPool& pool);
  void Attention(const Gemma4AudioLayerWeights& lw, ThreadPool& pool);
  void Convolution(const Gemma4AudioLayerWeights& lw, ThreadPool& pool);
  void Layer(int l, ThreadPool& pool);
  void Head(ThreadPool& pool);
};

void Gemma4AudioEncoding::State::Subsample(int piece, ThreadPool& pool) {
  const Config& c = encoder.config();
  const Mel& m = mel[static_cast<size_t>(piece)];
  x = Gemma4AudioSubsample(c, encoder.weights(), m.values, m.frames, pool);
  T = static_cast<int64_t>(x.size()) / c.n_embd;
  const size_t rows = static_cast<size_t>(T) * c.n_embd;
  h.resize(rows);
  q.resize(rows);
  k.resize(rows);
  v.resize(rows);
  a.resize(rows);
  o.resize(rows);
  wide.resize(static_cast<size_t>(T) * std::max(c.n_ff, 2 * c.n_embd));
}

// x += ½ · post(down(silu(up(pre(x))))).
void Gemma4AudioEncoding::State::FeedForward(const std::vector<float>& pre,
                                             const ClippedLinear& up_w, const ClippedLinear& down_w,
                                             const std::vector<float>& post, ThreadPool& pool) {
  const int F = encoder.config().n_ff;
  Norm(x.data(), pre, h.data(), pool, &up_w);
  ClippedMatMul(up_w, h.data(), T, wide.data(), clamp, pool, ClippedInput::kClamped);
  ForRows(T, pool, [&](int64_t t) {
    float* row = wide.data() + t * F;
    kernels::Silu(row, F, row);
    ClampToInput(down_w, row, F);
  });
  ClippedMatMul(down_w, wide.data(), T, o.data(), clamp, pool, ClippedInput::kClamped);
  AddResidual(o.data(), post, Config::kFfnResidual, pool);
}

// Local attention with relative positions: query t sees keys t - kMaxDistance .. t of its own
// piece; logit = q_t·k_s + q_t·R(t - s), soft-capped, softmax, the weighted values. Then
// x += post(out(a)).
void Gemma4AudioEncoding::State::Attention(const Gemma4AudioLayerWeights& lw, ThreadPool& pool) {
  const Config& c = encoder.config();
  const int D = c.n_embd, H = c.n_head, hd = c.head_dim();
  const ClippedProduct qkv[3] = {
      {&lw.attn_q, q.data()}, {&lw.attn_k, k.data()}, {&lw.attn_v, v.data()}};
  // Checkpoints share one set of bounds over q, k and v (one einsum in the original model).
  const bool shared = ShareInputBounds(qkv);
  Norm(x.data(), lw.attn_pre_norm, h.data(), pool, shared ? &lw.attn_q : nullptr);
  ClippedMatMulEach(qkv, h.data(), T, clamp, pool,
                    shared ? ClippedInput::kClamped : ClippedInput::kClamp);
  const float q_scale =
      static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)) / std::log(2.0));
  const float k_scale = static_cast<float>(std::log(1.0 + std::exp(1.0)) / std::log(2.0));
  const bool has_rel = lw.attn_k_rel.data != nullptr;
  if (has_rel) {
    rel.resize(static_cast<size_t>(kDistances) * D);
    kernels::MatMul(lw.attn_k_rel, pe.data(), kDistances, rel.data(), pool);
  }
  const float* dim_scale = lw.per_dim_scale.empty() ? nullptr : lw.per_dim_scale.data();
  ForRows(T, pool, [&](int64_t t) {
    float* qr = q.data() + t * D;
    kernels::Scale(qr, q_scale, D, qr);
    if (dim_scale != nullptr) {
      for (int head = 0; head < H; ++head) {
        float* qh = qr + head * hd;
        for (int j = 0; j < hd; ++j) qh[j] *= dim_scale[j];
      }
    }
    float* kr = k.data() + t * D;
    kernels::Scale(kr, k_scale, D, kr);
  });
  ForRows(T * H, pool, [&](int64_t task) {
    const int64_t t = task / H;
    const int head = static_cast<int>(task % H);
    const int64_t s0 = std::max<int64_t>(0, t - kMaxDistance);
    const int n_keys = static_cast<int>(t - s0 + 1);
    const float* qh = q.data() + t * D + head * hd;
    float logits[kDistances];
    for (int i = 0; i < n_keys; ++i) {
      const int64_t s = s0 + i;
      const float ac = Dot(qh, k.data() + s * D + head * hd, hd);
      const float bd = has_rel ? Dot(qh, rel.data() + (t - s) * D + head * hd, hd) : 0.0f;
      logits[i] = ac + bd;
    }
    kernels::Softcap(logits, Config::kSoftcap, n_keys, logits);
    kernels::Softmax(logits, n_keys, logits);
    float* ah = a.data() + t * D + head * hd;
    std::fill(ah, ah + hd, 0.0f);
    for (int i = 0; i < n_keys; ++i) {
      const float p = logits[i];
      const float* vh = v.data() + (s0 + i) * D + head * hd;
      for (int d = 0; d < hd; ++d) ah[d] += p * vh[d];
    }
    ClampToInput(lw.attn_out, ah, hd);
  });
  ClippedMatMul(lw.attn_out, a.data(), T, o.data(), clamp, pool, ClippedInput::kClamped);
  AddResidual(o.data(), lw.attn_post_norm, 1.0f, pool);
}

// The light conv module: h = pw1(pre(x)); value ⊙ sigmoid(gate); a causal depthwise filter over
// the last K rows of the piece, then silu(norm(·)) on the same row; x += pw2(·).
void Gemma4AudioEncoding::State::Convolution(const Gemma4AudioLayerWeights& lw, ThreadPool& pool) {
  const int D = encoder.config().n_embd;
  constexpr int K = Config::kConvKernel;
  Norm(x.data(), lw.conv_norm, h.data(), pool, &lw.conv_pw1);
  ClippedMatMul(lw.conv_pw1, h.data(), T, wide.data(), clamp, pool, ClippedInput::kClamped);
  ForRows(T, pool, [&](int64_t t) {
    const float* row = wide.data() + t * 2 * D;
    kernels::SigmoidGlu(row, row + D, D, a.data() + t * D);
  });
  ForRows(T, pool, [&](int64_t t) {
    float* y = h.data() + t * D;
    for (int j = 0; j < D; ++j) {
      const float* w = lw.conv_dw.data() + static_cast<size_t>(j) * K;
      float s = 0.0f;
      for (int tap = 0; tap < K; ++tap) {
        const int64_t src = t - (K - 1) + tap;
        if (src >= 0) s += w[tap] * a[static_cast<size_t>(src * D + j)];
      }
      y[j] = s;
    }
    if (!lw.norm_conv.empty()) {
      kernels::RmsNorm(y, lw.norm_conv.data(), Config::kNormEps, D, y);
    }
    kernels::Silu(y, D, y);
    ClampToInput(lw.conv_pw2, y, D);
  });
  ClippedMatMul(lw.conv_pw2, h.data(), T, o.data(), clamp, pool, ClippedInput::kClamped);
  AddResidual(o.data(), {}, 1.0f, pool);
}

void Gemma4AudioEncoding::State::Layer(int l, ThreadPool& pool) {
  const Gemma4AudioLayerWeights& lw = encoder.weights().layers[static_cast<size_t>(l)];
  FeedForward(lw.ffn_norm, lw.ffn_up, lw.ffn_down, lw.ffn_post_norm, pool);
  Attention(lw, pool);
  Convolution(lw, pool);
  FeedForward(lw.ffn_norm_1, lw.ffn_up_1, lw.ffn_down_1, lw.ffn_post_norm_1, pool);
  Norm(x.data(), lw.ln2, x.data(), pool);
}

// y = out·x + bias (when the file has the output projection), a weightless RMSNorm, then the
// projection into the text width; appended to `out`.
void Gemma4AudioEncoding::State::Head(ThreadPool& pool) {
  const Config& c = encoder.config();
  const Gemma4AudioWeights& w = encoder.weights();
  const int O = c.out_width(), Dt = c.n_embd_text;
  ActivationBuffer y;
  if (w.output_proj.w.data != nullptr) {
    y.resize(static_cast<size_t>(T) * O);
    ClippedMatMul(w.output_proj, x.data(), T, y.data(), clamp, pool);
    if (!w.output_bias.empty()) {
      for (int64_t t = 0; t < T; ++t) {
        kernels::Add(y.data() + t * O, w.output_bias.data(), O, y.data() + t * O);
      }
    }
  } else {
    y = std::move(x);
  }
  kernels::RmsNormRows(y.data(), O, nullptr, Config::kNormEps, O, T, y.data(), O, &pool);
  const size_t at = out.size();
  out.resize(at + static_cast<size_t>(T) * Dt);
  ClippedMatMul(w.mm_input_projection, y.data(), T, out.data() + at, clamp, pool);
  x.clear();
}

Gemma4AudioEncoding::Gemma4AudioEncoding(const Gemma4AudioEncoder& encoder,
                                         std::span<const Mel> mel)
    : s_(std::make_unique<State>(encoder, mel)) {}

Gemma4AudioEncoding::~Gemma4AudioEncoding() = default;

int Gemma4AudioEncoding::pieces() const {
  return static_cast<int>(s_->mel.size()) * (s_->encoder.config().n_layer + 2);
}

int Gemma4AudioEncoding::done() const {
  return s_->done;
}

bool Gemma4AudioEncoding::Step(ThreadPool& pool) {
  if (s_->done == pieces()) return true;
  const int per_piece = s_->encoder.config().n_layer + 2;
  const int piece = s_->done / per_piece, stage = s_->done % per_piece;
  if (stage == 0) {
    s_->Subsample(piece, pool);
  } else if (stage < per_piece - 1) {
    s_->Layer(stage - 1, pool);
  } else {
    s_->Head(pool);
  }
  ++s_->done;
  return s_->done == pieces();
}

std::vector<float> Gemma4AudioEncoding::Take() {
  if (s_->done != pieces()) {
    Fail(ErrorKind::kInternal, "gemma4a: the encoding was taken before its last piece ran");
  }
  return std::move(s_->out);
}

}  // namespace tandem
