#include "encoders/gemma4v/encoding.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/ops.h"

namespace tandem {
namespace {

using Image = Gemma4VisionEncoder::Image;
constexpr int kChunkRows = Gemma4VisionEncoder::kChunkRows;

// Where each patch of a call's images sits: patches are numbered image by image, row-major over
// each image's patch grid.
struct PatchLayout {
  struct Part {
    int64_t first = 0;   // the image's first patch
    int wp = 0, hp = 0;  // patches per row, rows of patches
  };
  std::vector<Part> images;
  std::vector<int32_t> col, row;        // [N] grid position of each patch
  std::vector<kernels::KeyRange> keys;  // [N] the patches of the patch's own image
  int64_t n = 0;
};

PatchLayout LayOut(std::span<const Image> images, int p) {
  PatchLayout l;
  for (const auto& im : images) {
    PatchLayout::Part part{l.n, im.width / p, im.height / p};
    const int64_t count = static_cast<int64_t>(part.wp) * part.hp;
    const kernels::KeyRange range{static_cast<int32_t>(l.n), static_cast<int32_t>(l.n + count)};
    for (int r = 0; r < part.hp; ++r) {
      for (int c = 0; c < part.wp; ++c) {
        l.col.push_back(c);
        l.row.push_back(r);
        l.keys.push_back(range);
      }
    }
    l.images.push_back(part);
    l.n += count;
  }
  return l;
}

int RoundUp(int x, int m) {
  return (x + m - 1) / m * m;
}

}  // namespace

struct Gemma4VisionEncoding::State {
  const Gemma4VisionEncoder& encoder;
  std::vector<Image> images;
  PatchLayout layout;
  int hdp = 0;  // the attention kernel's head width: head_dim, zero-padded
  int done = 0;
  // Residual stream [N][D].
  std::vector<float> e;
  // The 2-D RoPE's angles per patch: columns turn the first half of a head, rows the second.
  kernels::Rope rope;
  std::vector<float> col_angles, row_angles;
  // K and V of every patch, head-major [Hkv][N][hdp] (the padding stays zero), read by every
  // query row of the same image: one head's rows are contiguous, so the attention's pass over
  // them streams through the cache instead of touching one row in every few pages.
  std::vector<float> K, V;
  // K transposed per head, [Hkv][hd][N]: the dense attention's layout.
  std::vector<float> Kt;
  kernels::DenseAttentionArgs attn;
  // Scratch for a chunk of kChunkRows patch rows.
  std::vector<float> h, qt, kt, vt, qp, ap, a, o, gate, up, clamp;
  std::vector<std::vector<float>> out;

  State(const Gemma4VisionEncoder& enc, std::span<const Image> ims);
  void Embed(ThreadPool& pool);
  void Layer(int l, ThreadPool& pool);
  void PoolAndProject(ThreadPool& pool);
  // Rotates rows [r0, r0 + n) of `heads` heads: row t of head h at x + h·head_stride + t·stride.
  void Rotate(float* x, int64_t r0, int64_t n, int heads, size_t head_stride, size_t stride) const {
    const int half = encoder.config().head_dim / 2;
    for (int hh = 0; hh < heads; ++hh) {
      rope.ApplyAngles(x + hh * head_stride, n, stride, 1, col_angles.data() + r0 * half);
      rope.ApplyAngles(x + hh * head_stride + half, n, stride, 1, row_angles.data() + r0 * half);
    }
  }
};

Gemma4VisionEncoding::State::State(const Gemma4VisionEncoder& enc, std::span<const Image> ims)
    : encoder(enc),
      images(ims.begin(), ims.end()),
      rope(kernels::Rope::Neox(enc.config().head_dim / 2, enc.config().head_dim / 2,
                               enc.config().rope_theta)) {
  const Gemma4VisionConfig& c = encoder.config();
  for (size_t i = 0; i < images.size(); ++i) {
    if (images[i].rgb == nullptr) {
      Fail(ErrorKind::kInvalidArgument, "gemma4v: image " + std::to_string(i) + " has no pixels");
    }
    (void)c.Tokens(images[i].width, images[i].height);
  }
  const int D = c.n_embd, H = c.n_head, Hkv = c.n_head_kv, hd = c.head_dim, F = c.n_ff;
  const int half = hd / 2;
  hdp = RoundUp(hd, 16);
  layout = LayOut(images, c.patch_size);
  const int64_t N = layout.n;
  e.resize(static_cast<size_t>(N * D));

  // 2-D RoPE: the first half of each head turns with the patch's column, the second with its
  // row, each half a NEOX rotation of hd/2 dims (pairs j, j + hd/4).
  col_angles.resize(static_cast<size_t>(N) * half);
  row_angles.resize(col_angles.size());
  rope.Angles(layout.col.data(), N, col_angles.data());
  rope.Angles(layout.row.data(), N, row_angles.data());

  K.resize(static_cast<size_t>(N) * Hkv * hdp);
  V.resize(K.size());
  Kt.resize(static_cast<size_t>(Hkv) * hd * N);
  attn.n_heads = H;
  attn.n_kv_heads = Hkv;
  attn.head_dim = hd;
  attn.v_dim = hdp;
  attn.q_head_stride = attn.out_head_stride = static_cast<size_t>(kChunkRows) * hdp;
  attn.q_row_stride = attn.out_row_stride = hdp;
  attn.kt_head_stride = static_cast<size_t>(hd) * N;
  attn.kt_row_stride = N;
  attn.v_head_stride = static_cast<size_t>(N) * hdp;
  attn.v_row_stride = hdp;
  attn.scale = 1.0f;

  const size_t C = kChunkRows;
  h.resize(C * D);
  qt.resize(C * H * hd);
  kt.resize(C * Hkv * hd);
  vt.resize(C * Hkv * hd);
  qp.assign(C * H * hdp, 0.0f);
  ap.resize(C * H * hdp);
  a.resize(C * H * hd);
  o.resize(C * D);
  gate.resize(C * F);
  up.resize(C * F);
}

// Patch embedding of x = 2·pixels - 1 plus the two position tables, a chunk at a time.
void Gemma4VisionEncoding::State::Embed(ThreadPool& pool) {
  const Gemma4VisionConfig& c = encoder.config();
  const Gemma4VisionWeights& w = encoder.weights();
  const int p = c.patch_size, D = c.n_embd;
  const int64_t patch_cols = 3LL * p * p, N = layout.n;
  std::vector<float> patches(static_cast<size_t>(kChunkRows * patch_cols));
  std::vector<float> tx(static_cast<size_t>(kChunkRows) * D), ty(tx.size());
  std::vector<int32_t> ids(kChunkRows);
  for (int64_t r0 = 0; r0 < N; r0 += kChunkRows) {
    const int64_t n = std::min<int64_t>(kChunkRows, N - r0);
    for (int64_t r = 0; r < n; ++r) {
      const int64_t patch = r0 + r;
      const auto part =
          std::upper_bound(layout.images.begin(), layout.images.end(), patch,
                           [](int64_t v, const PatchLayout::Part& q) { return v < q.first; }) -
          1;
      const Image& im = images[static_cast<size_t>(part - layout.images.begin())];
      const int y0 = layout.row[patch] * p, x0 = layout.col[patch] * p;
      float* dst = patches.data() + r * patch_cols;
      for (int ch = 0; ch < 3; ++ch) {
        for (int y = 0; y < p; ++y) {
          const float* src = im.rgb + (static_cast<int64_t>(y0 + y) * im.width + x0) * 3 + ch;
          for (int x = 0; x < p; ++x) dst[(ch * p + y) * p + x] = 2.0f * src[3 * x] - 1.0f;
        }
      }
    }
    float* rows = e.data() + r0 * D;
    kernels::MatMul(w.patch_embd, patches.data(), n, rows, pool);
    kernels::EmbedRows(w.position_embd, layout.col.data() + r0, n, 1.0f, tx.data(), D, &pool);
    for (int64_t r = 0; r < n; ++r) ids[r] = c.n_pos + layout.row[r0 + r];
    kernels::EmbedRows(w.position_embd, ids.data(), n, 1.0f, ty.data(), D, &pool);
    kernels::Add(tx.data(), ty.data(), n * D, tx.data());
    kernels::Add(rows, tx.data(), n * D, rows);
  }
}

void Gemma4VisionEncoding::State::Layer(int l, ThreadPool& pool) {
  const Gemma4VisionConfig& c = encoder.config();
  const Gemma4VisionLayerWeights& lw = encoder.weights().layers[l];
  const int D = c.n_embd, H = c.n_head, Hkv = c.n_head_kv, hd = c.head_dim, F = c.n_ff;
  const int64_t N = layout.n;
  const float eps = c.eps;
  // Pass 1: K and V of all patches.
  for (int64_t r0 = 0; r0 < N; r0 += kChunkRows) {
    const int64_t n = std::min<int64_t>(kChunkRows, N - r0);
    kernels::RmsNormRows(e.data() + r0 * D, D, lw.ln1.data(), eps, D, n, h.data(), D, &pool);
    const ClippedProduct kv[2] = {{&lw.attn_k, kt.data()}, {&lw.attn_v, vt.data()}};
    ClippedMatMulEach(kv, h.data(), n, clamp, pool);
    const size_t kv_row = static_cast<size_t>(Hkv) * hd, head = static_cast<size_t>(N) * hdp;
    for (int g = 0; g < Hkv; ++g) {
      kernels::RmsNormRows(kt.data() + g * hd, kv_row, lw.attn_k_norm.data(), eps, hd, n,
                           K.data() + g * head + r0 * hdp, hdp, &pool);
      kernels::RmsNormRows(vt.data() + g * hd, kv_row, nullptr, eps, hd, n,
                           V.data() + g * head + r0 * hdp, hdp, &pool);
    }
    Rotate(K.data() + r0 * hdp, r0, n, Hkv, head, hdp);
  }
  for (int g = 0; g < Hkv; ++g) {  // K transposed: each head's keys along the rows
    const float* k = K.data() + static_cast<size_t>(g) * N * hdp;
    float* kt = Kt.data() + static_cast<size_t>(g) * hd * N;
    for (int64_t j = 0; j < N; ++j) {
      for (int d = 0; d < hd; ++d) kt[static_cast<size_t>(d) * N + j] = k[j * hdp + d];
    }
  }
  // Pass 2: queries, attention over the patch's image, and the rest of the layer, a chunk at a
  // time (a chunk's residual rows change only after their own queries were taken).
  for (int64_t r0 = 0; r0 < N; r0 += kChunkRows) {
    const int64_t n = std::min<int64_t>(kChunkRows, N - r0);
    float* x = e.data() + r0 * D;
    kernels::RmsNormRows(x, D, lw.ln1.data(), eps, D, n, h.data(), D, &pool);
    ClippedMatMul(lw.attn_q, h.data(), n, qt.data(), clamp, pool);
    // Queries and attention outputs are head-major [H][kChunkRows][hdp]: the rows of a head that
    // see the same keys (one image's) are attended together.
    const size_t head_stride = attn.q_head_stride;
    for (int hh = 0; hh < H; ++hh) {
      kernels::RmsNormRows(qt.data() + hh * hd, static_cast<size_t>(H) * hd, lw.attn_q_norm.data(),
                           eps, hd, n, qp.data() + hh * head_stride, hdp, &pool);
    }
    Rotate(qp.data(), r0, n, H, head_stride, hdp);
    for (int64_t a0 = 0; a0 < n;) {  // the chunk's rows image by image
      const kernels::KeyRange keys = layout.keys[r0 + a0];
      const int64_t a1 = std::min<int64_t>(n, keys.end - r0);
      attn.n_rows = static_cast<int>(a1 - a0);
      attn.n_keys = keys.end - keys.begin;
      attn.q = qp.data() + a0 * hdp;
      attn.out = ap.data() + a0 * hdp;
      attn.kt = Kt.data() + keys.begin;
      attn.v = V.data() + static_cast<size_t>(keys.begin) * hdp;
      kernels::AttentionDense(attn, &pool);
      a0 = a1;
    }
    for (int64_t t = 0; t < n; ++t) {  // back to rows [n][H·hd], without the padding
      for (int hh = 0; hh < H; ++hh) {
        std::memcpy(a.data() + (t * H + hh) * hd, ap.data() + hh * head_stride + t * hdp,
                    hd * sizeof(float));
      }
    }
    ClippedMatMul(lw.attn_out, a.data(), n, o.data(), clamp, pool);
    kernels::RmsNormRows(o.data(), D, lw.attn_post_norm.data(), eps, D, n, o.data(), D, &pool);
    kernels::Add(x, o.data(), n * D, x);

    kernels::RmsNormRows(x, D, lw.ln2.data(), eps, D, n, h.data(), D, &pool);
    const ClippedProduct gate_up[2] = {{&lw.ffn_gate, gate.data()}, {&lw.ffn_up, up.data()}};
    ClippedMatMulEach(gate_up, h.data(), n, clamp, pool);
    if (encoder.activation() == VisionActivation::kGeluTanh) {
      kernels::GeGlu(gate.data(), up.data(), n * F, gate.data(), pool);
    } else {
      kernels::GeGluQuick(gate.data(), up.data(), n * F, gate.data(), pool);
    }
    ClippedMatMul(lw.ffn_down, gate.data(), n, o.data(), clamp, pool);
    kernels::RmsNormRows(o.data(), D, lw.ffn_post_norm.data(), eps, D, n, o.data(), D, &pool);
    kernels::Add(x, o.data(), n * D, x);
    if (lw.has_out_scale) kernels::Scale(x, lw.out_scale, n * D, x);
  }
}

// Pooling: the mean of each k x k cell of an image's patch grid, cells row-major, then x sqrt(Dv),
// standardization, a weightless RMSNorm and the projection into the text width.
void Gemma4VisionEncoding::State::PoolAndProject(ThreadPool& pool) {
  const Gemma4VisionConfig& c = encoder.config();
  const Gemma4VisionWeights& w = encoder.weights();
  const int D = c.n_embd, k = c.pooling;
  std::vector<int64_t> first_token(images.size() + 1, 0);
  for (size_t i = 0; i < images.size(); ++i) {
    const auto& part = layout.images[i];
    first_token[i + 1] = first_token[i] + static_cast<int64_t>(part.wp / k) * (part.hp / k);
  }
  const int64_t T = first_token.back();
  std::vector<float> g(static_cast<size_t>(T) * D);
  const float cell = static_cast<float>(k * k);
  const float root = static_cast<float>(std::sqrt(static_cast<double>(D)));
  const bool standardize = !w.std_bias.empty() && !w.std_scale.empty();
  for (size_t i = 0; i < images.size(); ++i) {
    const auto& part = layout.images[i];
    const int wt = part.wp / k, ht = part.hp / k;
    for (int tr = 0; tr < ht; ++tr) {
      for (int tc = 0; tc < wt; ++tc) {
        float* dst = g.data() + (first_token[i] + static_cast<int64_t>(tr) * wt + tc) * D;
        for (int dy = 0; dy < k; ++dy) {
          for (int dx = 0; dx < k; ++dx) {
            const float* src =
                e.data() +
                (part.first + static_cast<int64_t>(tr * k + dy) * part.wp + tc * k + dx) * D;
            kernels::Add(dst, src, D, dst);
          }
        }
        for (int j = 0; j < D; ++j) {
          float v = dst[j] / cell * root;
          if (standardize) v = (v - w.std_bias[j]) * w.std_scale[j];
          dst[j] = v;
        }
      }
    }
  }
  // The residual stream, K and V are no longer needed.
  std::vector<float>().swap(e);
  std::vector<float>().swap(K);
  std::vector<float>().swap(V);
  std::vector<float>().swap(Kt);
  kernels::RmsNormRows(g.data(), D, nullptr, c.eps, D, T, g.data(), D, &pool);
  const int Dt = c.n_embd_text;
  std::vector<float> projected(static_cast<size_t>(T) * Dt);
  kernels::MatMul(w.input_projection, g.data(), T, projected.data(), pool);
  out.resize(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    out[i].assign(projected.begin() + first_token[i] * Dt,
                  projected.begin() + first_token[i + 1] * Dt);
  }
}

Gemma4VisionEncoding::Gemma4VisionEncoding(const Gemma4VisionEncoder& encoder,
                                           std::span<const Image> images)
    : s_(std::make_unique<State>(encoder, images)) {}

Gemma4VisionEncoding::~Gemma4VisionEncoding() = default;

int Gemma4VisionEncoding::pieces() const {
  return s_->encoder.config().n_layer + 2;
}

int Gemma4VisionEncoding::done() const {
  return s_->done;
}

bool Gemma4VisionEncoding::Step(ThreadPool& pool) {
  const int n_layer = s_->encoder.config().n_layer;
  if (s_->done == pieces()) return true;
  if (s_->images.empty()) {
    s_->done = pieces();
    return true;
  }
  if (s_->done == 0) {
    s_->Embed(pool);
  } else if (s_->done <= n_layer) {
    s_->Layer(s_->done - 1, pool);
  } else {
    s_->PoolAndProject(pool);
  }
  ++s_->done;
  return s_->done == pieces();
}

std::vector<std::vector<float>> Gemma4VisionEncoding::Take() {
  if (s_->done != pieces()) {
    Fail(ErrorKind::kInternal, "gemma4v: the encoding was taken before its last piece ran");
  }
  return std::move(s_->out);
}

}  // namespace tandem
