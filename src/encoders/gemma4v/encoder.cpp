#include "encoders/gemma4v/encoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encoders/mmproj_file.h"
#include "kernels/attention.h"
#include "kernels/embedding.h"
#include "kernels/ops.h"

namespace tandem {
namespace {

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

PatchLayout LayOut(std::span<const Gemma4VisionEncoder::Image> images, int p) {
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

// The scratch of one call, sized for a chunk of kChunkRows patch rows (K and V for all rows).
struct Scratch {
  std::vector<float> h, qt, kt, vt, qp, ap, a, o, gate, up, clamp;
};

}  // namespace

std::unique_ptr<Gemma4VisionEncoder> Gemma4VisionEncoder::Load(const std::string& path,
                                                               const VisionOptions& options) {
  return Load(std::shared_ptr<const MmprojFile>(MmprojFile::Open(path)), options);
}

std::unique_ptr<Gemma4VisionEncoder> Gemma4VisionEncoder::Load(
    std::shared_ptr<const MmprojFile> file, const VisionOptions& options) {
  Gemma4VisionConfig config = Gemma4VisionConfig::FromMmproj(*file);
  const VisionActivation activation = config.Activation(options.gelu, file->path());
  Gemma4VisionWeights weights = Gemma4VisionWeights::Bind(file->gguf(), config);
  if (options.repack) weights.Pack();
  return std::unique_ptr<Gemma4VisionEncoder>(
      new Gemma4VisionEncoder(std::move(file), std::move(config), std::move(weights), activation));
}

std::vector<float> Gemma4VisionEncoder::Encode(const float* rgb, int width, int height,
                                               ThreadPool& pool) const {
  const Image image{rgb, width, height};
  return std::move(EncodeBatch({&image, 1}, pool)[0]);
}

std::vector<std::vector<float>> Gemma4VisionEncoder::EncodeBatch(std::span<const Image> images,
                                                                 ThreadPool& pool) const {
  const Gemma4VisionConfig& c = config_;
  const Gemma4VisionWeights& w = weights_;
  for (size_t i = 0; i < images.size(); ++i) {
    if (images[i].rgb == nullptr) {
      Fail(ErrorKind::kInvalidArgument, "gemma4v: image " + std::to_string(i) + " has no pixels");
    }
    (void)c.Tokens(images[i].width, images[i].height);
  }
  if (images.empty()) return {};

  const int p = c.patch_size, D = c.n_embd, H = c.n_head, Hkv = c.n_head_kv, hd = c.head_dim;
  const int F = c.n_ff, half = hd / 2;
  const int hdp = RoundUp(hd, 16);  // the attention kernel's head width: hd, zero-padded
  const int64_t patch_cols = 3LL * p * p;
  const PatchLayout layout = LayOut(images, p);
  const int64_t N = layout.n;

  // Residual stream [N][D].
  std::vector<float> e(static_cast<size_t>(N * D));

  // Patch embedding of x = 2·pixels - 1 plus the two position tables, a chunk at a time.
  {
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
        float* out = patches.data() + r * patch_cols;
        for (int ch = 0; ch < 3; ++ch) {
          for (int y = 0; y < p; ++y) {
            const float* src = im.rgb + (static_cast<int64_t>(y0 + y) * im.width + x0) * 3 + ch;
            for (int x = 0; x < p; ++x) out[(ch * p + y) * p + x] = 2.0f * src[3 * x] - 1.0f;
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

  // 2-D RoPE: the first half of each head turns with the patch's column, the second with its
  // row, each half a NEOX rotation of hd/2 dims (pairs j, j + hd/4).
  const kernels::Rope rope = kernels::Rope::Neox(half, half, c.rope_theta);
  std::vector<float> col_angles(static_cast<size_t>(N) * half), row_angles(col_angles.size());
  rope.Angles(layout.col.data(), N, col_angles.data());
  rope.Angles(layout.row.data(), N, row_angles.data());
  // Rotates rows [r0, r0 + n) of `heads` heads: row t of head h at x + h·head_stride + t·stride.
  auto rotate = [&](float* x, int64_t r0, int64_t n, int heads, size_t head_stride, size_t stride) {
    for (int h = 0; h < heads; ++h) {
      rope.ApplyAngles(x + h * head_stride, n, stride, 1, col_angles.data() + r0 * half);
      rope.ApplyAngles(x + h * head_stride + half, n, stride, 1, row_angles.data() + r0 * half);
    }
  };

  // K and V of every patch [N][Hkv][hdp] (the padding stays zero), read by every query row of
  // the same image.
  std::vector<float> K(static_cast<size_t>(N) * Hkv * hdp), V(K.size());
  kernels::SharedKeysAttentionArgs attn;
  attn.n_heads = H;
  attn.head_stride = static_cast<size_t>(kChunkRows) * hdp;
  attn.kv.type = TensorType::kF32;
  attn.kv.k = K.data();
  attn.kv.v = V.data();
  attn.kv.n_kv_heads = Hkv;
  attn.kv.head_dim = hdp;
  attn.kv.n_slots = N;
  attn.kv.slot_stride_bytes = static_cast<size_t>(Hkv) * hdp * sizeof(float);
  attn.kv.head_stride_bytes = static_cast<size_t>(hdp) * sizeof(float);
  attn.kv.stored = {0, static_cast<int32_t>(N)};
  attn.scale = 1.0f;

  Scratch s;
  const size_t C = kChunkRows;
  s.h.resize(C * D);
  s.qt.resize(C * H * hd);
  s.kt.resize(C * Hkv * hd);
  s.vt.resize(C * Hkv * hd);
  s.qp.assign(C * H * hdp, 0.0f);
  s.ap.resize(C * H * hdp);
  s.a.resize(C * H * hd);
  s.o.resize(C * D);
  s.gate.resize(C * F);
  s.up.resize(C * F);

  const float eps = c.eps;
  for (int l = 0; l < c.n_layer; ++l) {
    const Gemma4VisionLayerWeights& lw = w.layers[l];
    // Pass 1: K and V of all patches.
    for (int64_t r0 = 0; r0 < N; r0 += kChunkRows) {
      const int64_t n = std::min<int64_t>(kChunkRows, N - r0);
      kernels::RmsNormRows(e.data() + r0 * D, D, lw.ln1.data(), eps, D, n, s.h.data(), D, &pool);
      const ClippedProduct kv[2] = {{&lw.attn_k, s.kt.data()}, {&lw.attn_v, s.vt.data()}};
      ClippedMatMulEach(kv, s.h.data(), n, s.clamp, pool);
      float* k = K.data() + r0 * Hkv * hdp;
      kernels::RmsNormRows(s.kt.data(), hd, lw.attn_k_norm.data(), eps, hd, n * Hkv, k, hdp, &pool);
      kernels::RmsNormRows(s.vt.data(), hd, nullptr, eps, hd, n * Hkv, V.data() + r0 * Hkv * hdp,
                           hdp, &pool);
      rotate(k, r0, n, Hkv, hdp, static_cast<size_t>(Hkv) * hdp);
    }
    // Pass 2: queries, attention over the patch's image, and the rest of the layer, a chunk at
    // a time (a chunk's residual rows change only after their own queries were taken).
    for (int64_t r0 = 0; r0 < N; r0 += kChunkRows) {
      const int64_t n = std::min<int64_t>(kChunkRows, N - r0);
      float* x = e.data() + r0 * D;
      kernels::RmsNormRows(x, D, lw.ln1.data(), eps, D, n, s.h.data(), D, &pool);
      ClippedMatMul(lw.attn_q, s.h.data(), n, s.qt.data(), s.clamp, pool);
      // Queries and attention outputs are head-major [H][kChunkRows][hdp]: the rows of a head
      // that see the same keys (one image's) are attended together.
      const size_t head_stride = attn.head_stride;
      for (int h = 0; h < H; ++h) {
        kernels::RmsNormRows(s.qt.data() + h * hd, static_cast<size_t>(H) * hd,
                             lw.attn_q_norm.data(), eps, hd, n, s.qp.data() + h * head_stride, hdp,
                             &pool);
      }
      rotate(s.qp.data(), r0, n, H, head_stride, hdp);
      for (int64_t a0 = 0; a0 < n;) {  // the chunk's rows image by image
        const kernels::KeyRange keys = layout.keys[r0 + a0];
        const int64_t a1 = std::min<int64_t>(n, keys.end - r0);
        attn.n_rows = static_cast<int>(a1 - a0);
        attn.q = s.qp.data() + a0 * hdp;
        attn.out = s.ap.data() + a0 * hdp;
        attn.keys = keys;
        kernels::AttentionSharedKeys(attn, &pool);
        a0 = a1;
      }
      for (int64_t t = 0; t < n; ++t) {  // back to rows [n][H·hd], without the padding
        for (int h = 0; h < H; ++h) {
          std::memcpy(s.a.data() + (t * H + h) * hd, s.ap.data() + h * head_stride + t * hdp,
                      hd * sizeof(float));
        }
      }
      ClippedMatMul(lw.attn_out, s.a.data(), n, s.o.data(), s.clamp, pool);
      kernels::RmsNormRows(s.o.data(), D, lw.attn_post_norm.data(), eps, D, n, s.o.data(), D,
                           &pool);
      kernels::Add(x, s.o.data(), n * D, x);

      kernels::RmsNormRows(x, D, lw.ln2.data(), eps, D, n, s.h.data(), D, &pool);
      const ClippedProduct gate_up[2] = {{&lw.ffn_gate, s.gate.data()}, {&lw.ffn_up, s.up.data()}};
      ClippedMatMulEach(gate_up, s.h.data(), n, s.clamp, pool);
      if (activation_ == VisionActivation::kGeluTanh) {
        kernels::GeGlu(s.gate.data(), s.up.data(), n * F, s.gate.data(), pool);
      } else {
        kernels::GeGluQuick(s.gate.data(), s.up.data(), n * F, s.gate.data(), pool);
      }
      ClippedMatMul(lw.ffn_down, s.gate.data(), n, s.o.data(), s.clamp, pool);
      kernels::RmsNormRows(s.o.data(), D, lw.ffn_post_norm.data(), eps, D, n, s.o.data(), D, &pool);
      kernels::Add(x, s.o.data(), n * D, x);
      if (lw.has_out_scale) kernels::Scale(x, lw.out_scale, n * D, x);
    }
  }

  // Pooling: the mean of each k x k cell of an image's patch grid, cells row-major, then
  // x sqrt(Dv), standardization, a weightless RMSNorm and the projection into the text width.
  const int k = c.pooling;
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
        float* out = g.data() + (first_token[i] + static_cast<int64_t>(tr) * wt + tc) * D;
        for (int dy = 0; dy < k; ++dy) {
          for (int dx = 0; dx < k; ++dx) {
            const float* src =
                e.data() +
                (part.first + static_cast<int64_t>(tr * k + dy) * part.wp + tc * k + dx) * D;
            kernels::Add(out, src, D, out);
          }
        }
        for (int j = 0; j < D; ++j) {
          float v = out[j] / cell * root;
          if (standardize) v = (v - w.std_bias[j]) * w.std_scale[j];
          out[j] = v;
        }
      }
    }
  }
  kernels::RmsNormRows(g.data(), D, nullptr, eps, D, T, g.data(), D, &pool);
  const int Dt = c.n_embd_text;
  std::vector<float> projected(static_cast<size_t>(T) * Dt);
  kernels::MatMul(w.input_projection, g.data(), T, projected.data(), pool);

  std::vector<std::vector<float>> out(images.size());
  for (size_t i = 0; i < images.size(); ++i) {
    out[i].assign(projected.begin() + first_token[i] * Dt,
                  projected.begin() + first_token[i + 1] * Dt);
  }
  return out;
}

}  // namespace tandem
