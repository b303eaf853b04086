// The K-quant encoders: ggml's `quantize_row_q{4,5,6,8}_K_ref` rewritten from docs/formats.md.
//
// Float expressions keep ggml's evaluation order (int operands converted where C converts them)
// so that the bytes match llama.cpp's for the same input.
#include "tensor/formats/kquant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace tandem::formats {
namespace {

// ggml's make_qkx2_quants with use_mad = false: fits x[n] ≈ scale * L - the_min with L in
// 0..nmax by a weighted least-squares search over nstep + 1 candidate inverse scales.
// Returns the scale; writes L[n] and *the_min (>= 0). Laux[n] is scratch.
float MakeQkx2Quants(int n, int nmax, const float* x, const float* weights, uint8_t* L,
                     float* the_min, uint8_t* Laux, float rmin, float rdelta, int nstep) {
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
    best_error += weights[i] * (diff * diff);
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
        cur_error += weights[i] * (diff * diff);
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
        MakeQkx2Quants(32, nmax, xs, weights, L + 32 * j, &mins[j], laux, rmin, 0.1f, nstep);
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
  float max_scale = 0, max_abs_scale = 0;
  for (int k = 0; k < 16; ++k) {
    scales[k] = MakeQxQuants(16, 32, x + 16 * k, L + 16 * k);
    const float abs_scale = std::fabs(scales[k]);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scales[k];
    }
  }
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

template void EncodeBlocks<Q4_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q5_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q6_K>(const float*, void*, int64_t);
template void EncodeBlocks<Q8_K>(const float*, void*, int64_t);

}  // namespace tandem::formats
