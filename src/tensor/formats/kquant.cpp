// The K-quant encoders: ggml's `quantize_row_q{2,3,4,5,6,8}_K_ref` rewritten from
// docs/formats.md.
//
// Float expressions keep ggml's evaluation order (int operands converted where C converts them)
// so that the bytes match llama.cpp's for the same input.
#include "tensor/formats/kquant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tandem::formats {
namespace {

// ggml's make_qkx2_quants: fits x[n] ≈ scale * L - the_min with L in 0..nmax by a weighted
// least-squares search over nstep + 1 candidate inverse scales, each candidate judged by its
// weighted squared error, or with `use_mad` (Q2_K) its weighted absolute error.
// Returns the scale; writes L[n] and *the_min (>= 0). Laux[n] is scratch.
float MakeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                     float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep,
                     bool use_mad) {
  const auto error_term = [use_mad](float diff) { return use_mad ? std::fabs(diff) : diff * diff; };
  float min = x[0];
  float max = x[0];
  float sum_w = weights[0];
  float sum_x = sum_w * x[0];
  for (int i = 1; i < n; ++i) {
    if (x[i] < min) min = x[i];
    if (x[i] > max) max = x[i];
    const float w = weights[i];
    sum_w += w;
    sum_x += w * x[i];
  }
  if (min > 0) min = 0;
  if (max == min) {
    std::fill(L, L + n, 0);
    *the_min = -min;
    return 0.0f;
  }
  float iscale = static_cast<float>(nmax) / (max - min);
  float scale = 1 / iscale;
  float best_error = 0;
  for (int i = 0; i < n; ++i) {
    const int l = NearestInt(iscale * (x[i] - min));
    L[i] = static_cast<uint8_t>(std::clamp(l, 0, nmax));
    const float diff = scale * static_cast<float>(L[i]) + min - x[i];
    best_error += weights[i] * error_term(diff);
  }
  for (int is = 0; is <= nstep; ++is) {
    iscale = (rmin + rdelta * static_cast<float>(is) + static_cast<float>(nmax)) / (max - min);
    float sum_l = 0, sum_l2 = 0, sum_xl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(NearestInt(iscale * (x[i] - min)), 0, nmax);
      Laux[i] = static_cast<uint8_t>(l);
      const float w = weights[i];
      const float fl = static_cast<float>(l);
      sum_l += w * fl;
      sum_l2 += w * fl * fl;
      sum_xl += w * fl * x[i];
    }
    const float det = sum_w * sum_l2 - sum_l * sum_l;
    if (det > 0) {
      float this_scale = (sum_w * sum_xl - sum_x * sum_l) / det;
      float this_min = (sum_l2 * sum_x - sum_l * sum_xl) / det;
      if (this_min > 0) {
        this_min = 0;
        this_scale = sum_xl / sum_l2;
      }
      float cur_error = 0;
      for (int i = 0; i < n; ++i) {
        const float diff = this_scale * static_cast<float>(Laux[i]) + this_min - x[i];
        cur_error += weights[i] * error_term(diff);
      }
      if (cur_error < best_error) {
        std::copy(Laux, Laux + n, L);
        best_error = cur_error;
        scale = this_scale;
        min = this_min;
      }
    }
  }
  *the_min = -min;
  return scale;
}

// ggml's make_qx_quants with rmse_type = 1 and no importance weights (weights x²): fits
// x[n] ≈ scale * (L - nmax) with L - nmax in -nmax..nmax-1, trying 19 inverse scales.
// Returns the (signed) scale and writes L[n] (biased by nmax).
float MakeQxQuants(int n, int nmax, const float* x, int8_t* L) {
  float max, amax;
  SignedAbsMax(x, n, &max, &amax);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, 0);
    return 0.0f;
  }
  const auto quantize = [&](float iscale, float* sumlx, float* suml2, bool store) {
    *sumlx = 0;
    *suml2 = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1);
      if (store) L[i] = static_cast<int8_t>(l + nmax);
      const float w = x[i] * x[i];
      const float fl = static_cast<float>(l);
      *sumlx += w * x[i] * fl;
      *suml2 += w * fl * fl;
    }
  };
  float sumlx, suml2;
  quantize(static_cast<float>(-nmax) / max, &sumlx, &suml2, true);
  float scale = suml2 != 0 ? sumlx / suml2 : 0.0f;
  float best = scale * sumlx;
  for (int is = -9; is <= 9; ++is) {
    if (is == 0) continue;
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(is)) / max;
    quantize(iscale, &sumlx, &suml2, false);
    if (suml2 > 0 && sumlx * sumlx > best * suml2) {
      quantize(iscale, &sumlx, &suml2, true);
      scale = sumlx / suml2;
      best = scale * sumlx;
    }
  }
  return scale;
}

// ggml's make_q3_quants with do_rmse: fits x[n] ≈ scale * l with l in -nmax..nmax-1. Starts
// from the inverse scale -nmax/max (max = the signed value of largest magnitude), then up to 5
// passes move single codes to the value that raises (Σw·x·l)² / Σw·l² (weights x²), keeping a
// move only if it does. Returns Σw·x·l / Σw·l² and writes L[n] biased by nmax; an all-zero group
// (|x| < GROUP_MAX_EPS) gives scale 0 and L = 0 (not nmax).
float MakeQ3Quants(int n, int nmax, const float* x, int8_t* L) {
  float max, amax;
  SignedAbsMax(x, n, &max, &amax);
  if (amax < kGroupMaxEps) {
    std::fill(L, L + n, 0);
    return 0.0f;
  }
  const float iscale = static_cast<float>(-nmax) / max;
  float sumlx = 0, suml2 = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(NearestInt(iscale * x[i]), -nmax, nmax - 1);
    L[i] = static_cast<int8_t>(l);
    const float w = x[i] * x[i];
    const float fl = static_cast<float>(l);
    sumlx += w * x[i] * fl;
    suml2 += w * fl * fl;
  }
  for (int pass = 0; pass < 5; ++pass) {
    int n_changed = 0;
    for (int i = 0; i < n; ++i) {
      const float w = x[i] * x[i];
      const float old_l = static_cast<float>(L[i]);
      float slx = sumlx - w * x[i] * old_l;
      if (!(slx > 0)) continue;
      float sl2 = suml2 - w * old_l * old_l;
      const int new_l = std::clamp(NearestInt(x[i] * sl2 / slx), -nmax, nmax - 1);
      if (new_l == L[i]) continue;
      const float fl = static_cast<float>(new_l);
      slx += w * x[i] * fl;
      sl2 += w * fl * fl;
      if (sl2 > 0 && slx * slx * suml2 > sumlx * sumlx * sl2) {
        L[i] = static_cast<int8_t>(new_l);
        sumlx = slx;
        suml2 = sl2;
        ++n_changed;
      }
    }
    if (n_changed == 0) break;
  }
  for (int i = 0; i < n; ++i) L[i] = static_cast<int8_t>(L[i] + nmax);
  return sumlx / suml2;
}

// Q2_K/Q3_K: packs 2-bit codes L[256] (0..3): qs[32h + l] holds elements 128h + l + 32j at bits
// 2j..2j+1, j = 0..3.
void PackTwoBitCodes(const uint8_t* L, uint8_t qs[kQK_K / 4]) {
  for (int h = 0; h < 2; ++h) {
    const uint8_t* q = L + 128 * h;
    for (int l = 0; l < 32; ++l) {
      qs[32 * h + l] =
          static_cast<uint8_t>(q[l] | (q[l + 32] << 2) | (q[l + 64] << 4) | (q[l + 96] << 6));
    }
  }
}

// Q4_K/Q5_K: packs 6-bit scale `sc` and min `m` of sub-block j (inverse of UnpackScaleMinK4).
// Call for j = 0..7 in order: j < 4 assigns bytes 0..7, j >= 4 ORs its high bits into them.
void PackScaleMinK4(int j, uint8_t sc, uint8_t m, uint8_t* s) {
  if (j < 4) {
    s[j] = sc;
    s[j + 4] = m;
  } else {
    s[j + 4] = static_cast<uint8_t>((sc & 0xF) | ((m & 0xF) << 4));
    s[j - 4] |= static_cast<uint8_t>((sc >> 4) << 6);
    s[j] |= static_cast<uint8_t>((m >> 4) << 6);
  }
}

// Shared Q4_K/Q5_K path: computes d, dmin, the packed scales and the codes L[256] (0..nmax)
// of one super-block x[256].
void QuantizeSuperBlockK(const float* x, int nmax, float rmin, int nstep, uint16_t* d_out,
                         uint16_t* dmin_out, uint8_t scales_out[kKScaleSize], uint8_t L[kQK_K]) {
  float scales[8], mins[8], weights[32];
  uint8_t laux[32];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float sum_x2 = 0;
    for (int l = 0; l < 32; ++l) sum_x2 += xs[l] * xs[l];
    const float av_x = std::sqrt(sum_x2 / 32);
    for (int l = 0; l < 32; ++l) weights[l] = av_x + std::fabs(xs[l]);
    scales[j] =
        MakeQkx2Quants(32, nmax, xs, weights, L + 32 * j, &mins[j], laux, rmin, 0.1f, nstep, false);
    if (scales[j] > max_scale) max_scale = scales[j];
    if (mins[j] > max_min) max_min = mins[j];
  }
  const float inv_scale = max_scale > 0 ? 63.f / max_scale : 0.f;
  const float inv_min = max_min > 0 ? 63.f / max_min : 0.f;
  for (int j = 0; j < 8; ++j) {
    // ggml stores nearest_int into a uint8_t before clamping; keep that truncation.
    const uint8_t ls =
        std::min<uint8_t>(63, static_cast<uint8_t>(NearestInt(inv_scale * scales[j])));
    const uint8_t lm = std::min<uint8_t>(63, static_cast<uint8_t>(NearestInt(inv_min * mins[j])));
    PackScaleMinK4(j, ls, lm, scales_out);
  }
  *d_out = Fp32ToFp16(max_scale / 63.f);
  *dmin_out = Fp32ToFp16(max_min / 63.f);
  // Re-quantize with the decoded fp16 scales.
  for (int j = 0; j < 8; ++j) {
    uint8_t sc, m;
    UnpackScaleMinK4(j, scales_out, &sc, &m);
    const float d = Fp16ToFp32(*d_out) * static_cast<float>(sc);
    if (d == 0) continue;
    const float dm = Fp16ToFp32(*dmin_out) * static_cast<float>(m);
    for (int l = 0; l < 32; ++l) {
      L[32 * j + l] =
          static_cast<uint8_t>(std::clamp(NearestInt((x[32 * j + l] + dm) / d), 0, nmax));
    }
  }
}

}  // namespace

void Q2_K::Encode(const float* x, Block* y) {
  constexpr float kScaleLevels = 15.f;  // 4-bit sub-scales and sub-mins
  uint8_t L[kQK_K], laux[16];
  float weights[16], scales[16], mins[16];
  float max_scale = 0, max_min = 0;
  for (int k = 0; k < 16; ++k) {
    const float* xs = x + 16 * k;
    for (int l = 0; l < 16; ++l) weights[l] = std::fabs(xs[l]);
    scales[k] =
        MakeQkx2Quants(16, 3, xs, weights, L + 16 * k, &mins[k], laux, -0.5f, 0.1f, 15, true);
    if (scales[k] > max_scale) max_scale = scales[k];
    if (mins[k] > max_min) max_min = mins[k];
  }
  // ggml stores nearest_int's int into the byte (modulo 256) and ORs the min in above it.
  if (max_scale > 0) {
    const float iscale = kScaleLevels / max_scale;
    for (int k = 0; k < 16; ++k)
      y->scales[k] = static_cast<uint8_t>(NearestInt(iscale * scales[k]));
    y->d = Fp32ToFp16(max_scale / kScaleLevels);
  } else {
    std::memset(y->scales, 0, sizeof y->scales);
    y->d = Fp32ToFp16(0.0f);
  }
  if (max_min > 0) {
    const float iscale = kScaleLevels / max_min;
    for (int k = 0; k < 16; ++k) {
      y->scales[k] |=
          static_cast<uint8_t>(static_cast<unsigned>(NearestInt(iscale * mins[k])) << 4);
    }
    y->dmin = Fp32ToFp16(max_min / kScaleLevels);
  } else {
    y->dmin = Fp32ToFp16(0.0f);
  }
  // Re-quantize with the decoded fp16 scales and mins.
  for (int k = 0; k < 16; ++k) {
    const float d = Fp16ToFp32(y->d) * static_cast<float>(y->scales[k] & 0xF);
    if (d == 0) continue;
    const float dm = Fp16ToFp32(y->dmin) * static_cast<float>(y->scales[k] >> 4);
    for (int l = 0; l < 16; ++l) {
      L[16 * k + l] = static_cast<uint8_t>(std::clamp(NearestInt((x[16 * k + l] + dm) / d), 0, 3));
    }
  }
  PackTwoBitCodes(L, y->qs);
}

void Q3_K::Encode(const float* x, Block* y) {
  int8_t L[kQK_K];
  float scales[16];
  for (int k = 0; k < 16; ++k) scales[k] = MakeQ3Quants(16, 4, x + 16 * k, L + 16 * k);
  float max_scale, max_abs_scale;  // the signed scale of largest magnitude
  SignedAbsMax(scales, 16, &max_scale, &max_abs_scale);
  std::memset(y->scales, 0, sizeof y->scales);
  if (max_scale != 0) {
    const float iscale = -32.f / max_scale;
    for (int k = 0; k < 16; ++k) {
      const int l = std::clamp(NearestInt(iscale * scales[k]), -32, 31) + 32;
      if (k < 8) {
        y->scales[k] = static_cast<uint8_t>(l & 0xF);
      } else {
        y->scales[k - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
      }
      y->scales[8 + k % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (k / 4)));
    }
    y->d = Fp32ToFp16(1 / iscale);
  } else {
    y->d = Fp32ToFp16(0.0f);
  }
  // Re-quantize with the decoded scales; a sub-block whose scale decodes to 0 keeps its codes.
  int8_t sc[16];
  UnpackScalesQ3K(y->scales, sc);
  for (int k = 0; k < 16; ++k) {
    const float d = Fp16ToFp32(y->d) * static_cast<float>(sc[k]);
    if (d == 0) continue;
    for (int l = 0; l < 16; ++l) {
      L[16 * k + l] = static_cast<int8_t>(std::clamp(NearestInt(x[16 * k + l] / d), -4, 3) + 4);
    }
  }
  // Codes 0..7: the high bit goes to hmask (bit e/32 of hmask[e % 32]), the low two to qs.
  uint8_t low[kQK_K];
  std::memset(y->hmask, 0, sizeof y->hmask);
  for (int e = 0; e < kQK_K; ++e) {
    int q = L[e];
    if (q > 3) {
      y->hmask[e % 32] |= static_cast<uint8_t>(1 << (e / 32));
      q -= 4;
    }
    low[e] = static_cast<uint8_t>(q);
  }
  PackTwoBitCodes(low, y->qs);
}

void Q4_K::Encode(const float* x, Block* y) {
  uint8_t L[kQK_K];
  QuantizeSuperBlockK(x, 15, -1.0f, 20, &y->d, &y->dmin, y->scales, L);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      y->qs[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
    }
  }
}

void Q5_K::Encode(const float* x, Block* y) {
  uint8_t L[kQK_K];
  QuantizeSuperBlockK(x, 31, -0.5f, 15, &y->d, &y->dmin, y->scales, L);
  std::memset(y->qh, 0, sizeof y->qh);
  for (int c = 0; c < 4; ++c) {
    for (int l = 0; l < 32; ++l) {
      const int lo = L[64 * c + l];
      const int hi = L[64 * c + 32 + l];
      y->qs[32 * c + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      y->qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
    }
  }
}

void Q6_K::Encode(const float* x, Block* y) {
  int8_t L[kQK_K];
  float scales[16];
  for (int k = 0; k < 16; ++k) scales[k] = MakeQxQuants(16, 32, x + 16 * k, L + 16 * k);
  float max_scale, max_abs_scale;  // the signed scale of largest magnitude
  SignedAbsMax(scales, 16, &max_scale, &max_abs_scale);
  if (max_abs_scale < kGroupMaxEps) {
    std::memset(y, 0, sizeof *y);
    return;
  }
  const float iscale = -128.f / max_scale;
  y->d = Fp32ToFp16(1 / iscale);
  for (int k = 0; k < 16; ++k) {
    y->scales[k] = static_cast<int8_t>(std::min(127, NearestInt(iscale * scales[k])));
  }
  for (int k = 0; k < 16; ++k) {
    const float d = Fp16ToFp32(y->d) * static_cast<float>(y->scales[k]);
    if (d == 0) continue;
    for (int l = 0; l < 16; ++l) {
      L[16 * k + l] = static_cast<int8_t>(std::clamp(NearestInt(x[16 * k + l] / d), -32, 31) + 32);
    }
  }
  for (int half = 0; half < 2; ++half) {
    const int8_t* q = L + 128 * half;
    for (int l = 0; l < 32; ++l) {
      y->ql[64 * half + l] = static_cast<uint8_t>((q[l] & 0xF) | ((q[l + 64] & 0xF) << 4));
      y->ql[64 * half + l + 32] =
          static_cast<uint8_t>((q[l + 32] & 0xF) | ((q[l + 96] & 0xF) << 4));
      y->qh[32 * half + l] =
          static_cast<uint8_t>((q[l] >> 4) | ((q[l + 32] >> 4) << 2) | ((q[l + 64] >> 4) << 4) |
                               ((q[l + 96] >> 4) << 6));
    }
  }
}

void Q8_K::Encode(const float* x, Block* y) {
  float max, amax;
  SignedAbsMax(x, kQK_K, &max, &amax);
  if (amax == 0) {
    std::memset(y, 0, sizeof *y);
    return;
  }
  const float iscale = -127.f / max;
  for (int j = 0; j < kQK_K; ++j) {
    y->qs[j] = static_cast<int8_t>(std::min(127, NearestInt(iscale * x[j])));
  }
  for (int k = 0; k < kQK_K / 16; ++k) {
    int sum = 0;
    for (int l = 0; l < 16; ++l) sum += y->qs[16 * k + l];
    y->bsums[k] = static_cast<int16_t>(sum);
  }
  y->d = 1 / iscale;
}

template void EncodeBlocks<Q2_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q3_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q4_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q5_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q6_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q8_K>(const float*, void*, int64_t);

}  // namespace tandem::formats
