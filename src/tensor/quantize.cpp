// Reference quantizers: ggml's `quantize_row_*_ref` rewritten from docs/formats.md.
//
// Float expressions keep ggml's evaluation order (int operands converted where C converts them)
// so that the bytes match llama.cpp's for the same input.
#include "tensor/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "base/error.h"
#include "tensor/float16.h"

namespace tandem {
namespace {

constexpr float kGroupMaxEps = 1e-15f;  // ggml's GROUP_MAX_EPS: below this a group is zero

int64_t Blocks(TensorType type, int64_t n) {
  CheckRowLength(type, n, "QuantizeRow");
  return n / GetTensorTypeTraits(type).block_size;
}

// C's `min(hi, (int)v)` for the legacy codes, where valid inputs give v >= 0. Out-of-range
// and NaN arguments (from non-finite inputs) are clamped instead of being undefined behaviour.
int TruncCode(float v, int hi) {
  if (!(v > 0)) return 0;
  if (v >= static_cast<float>(hi)) return hi;
  return static_cast<int>(v);
}

// roundf(v) as an int8 code (|v| <= 127 for valid inputs); NaN gives 0.
int8_t RoundCode(float v) {
  if (std::isnan(v)) return 0;
  return static_cast<int8_t>(std::clamp(std::roundf(v), -128.0f, 127.0f));
}

// Signed value of the element with the largest magnitude (the first one on ties), and that
// magnitude, over x[n].
void SignedAbsMax(const float* x, int n, float* max, float* amax) {
  *max = 0.0f;
  *amax = 0.0f;
  for (int i = 0; i < n; ++i) {
    const float ax = std::fabs(x[i]);
    if (ax > *amax) {
      *amax = ax;
      *max = x[i];
    }
  }
}

// Legacy "min" types: smallest and largest value of a block.
void MinMax(const float* x, int n, float* min, float* max) {
  *min = 3.402823466e+38f;
  *max = -3.402823466e+38f;
  for (int i = 0; i < n; ++i) {
    if (x[i] < *min) *min = x[i];
    if (x[i] > *max) *max = x[i];
  }
}

// Packs bit 4 of each of the 32 codes q[32] into a little-endian u32 (bit e = element e).
void PackHighBits(const int* q, uint8_t qh[4]) {
  uint32_t bits = 0;
  for (int e = 0; e < 32; ++e) bits |= static_cast<uint32_t>((q[e] >> 4) & 1) << e;
  std::memcpy(qh, &bits, sizeof bits);
}

// Packs 32 codes (0..15 after masking) with element j low and j+16 high in qs[j].
void PackNibblePairs(const int* q, uint8_t qs[16]) {
  for (int j = 0; j < 16; ++j)
    qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}

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

// Q8_0 and Q8_1 share d and qs; Q8_1 also stores s = fp16(d * sum(qs)).
template <typename Block>
float QuantizeBlock8(const float* x, Block* y) {
  float amax = 0.0f;
  for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[j]));
  const float d = amax / 127;
  const float id = d != 0 ? 1.0f / d : 0.0f;
  y->d = Fp32ToFp16(d);
  for (int j = 0; j < 32; ++j) y->qs[j] = RoundCode(x[j] * id);
  return d;
}

}  // namespace

void QuantizeRowF16(const float* src, uint16_t* dst, int64_t n) {
  CheckRowLength(TensorType::kF16, n, "QuantizeRow");
  for (int64_t i = 0; i < n; ++i) dst[i] = Fp32ToFp16(src[i]);
}

void QuantizeRowBF16(const float* src, uint16_t* dst, int64_t n) {
  CheckRowLength(TensorType::kBF16, n, "QuantizeRow");
  for (int64_t i = 0; i < n; ++i) dst[i] = Fp32ToBf16(src[i]);
}

void QuantizeRowQ4_0(const float* src, BlockQ4_0* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ4_0, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK4_0) {
    float max, amax;
    SignedAbsMax(src, kQK4_0, &max, &amax);
    const float d = max / -8;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[i].d = Fp32ToFp16(d);
    int q[kQK4_0];
    for (int j = 0; j < kQK4_0; ++j) q[j] = TruncCode(src[j] * id + 8.5f, 15);
    PackNibblePairs(q, dst[i].qs);
  }
}

void QuantizeRowQ4_1(const float* src, BlockQ4_1* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ4_1, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK4_1) {
    float min, max;
    MinMax(src, kQK4_1, &min, &max);
    const float d = (max - min) / 15;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[i].d = Fp32ToFp16(d);
    dst[i].m = Fp32ToFp16(min);
    int q[kQK4_1];
    for (int j = 0; j < kQK4_1; ++j) {
      q[j] = TruncCode((src[j] - min) * id + 0.5f, 15);
    }
    PackNibblePairs(q, dst[i].qs);
  }
}

void QuantizeRowQ5_0(const float* src, BlockQ5_0* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ5_0, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK5_0) {
    float max, amax;
    SignedAbsMax(src, kQK5_0, &max, &amax);
    const float d = max / -16;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[i].d = Fp32ToFp16(d);
    int q[kQK5_0];
    for (int j = 0; j < kQK5_0; ++j) q[j] = TruncCode(src[j] * id + 16.5f, 31);
    PackNibblePairs(q, dst[i].qs);
    PackHighBits(q, dst[i].qh);
  }
}

void QuantizeRowQ5_1(const float* src, BlockQ5_1* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ5_1, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK5_1) {
    float min, max;
    MinMax(src, kQK5_1, &min, &max);
    const float d = (max - min) / 31;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[i].d = Fp32ToFp16(d);
    dst[i].m = Fp32ToFp16(min);
    int q[kQK5_1];
    // ggml does not clamp here: (max - min) * id + 0.5 stays below 32 for finite input.
    for (int j = 0; j < kQK5_1; ++j) q[j] = TruncCode((src[j] - min) * id + 0.5f, 31);
    PackNibblePairs(q, dst[i].qs);
    PackHighBits(q, dst[i].qh);
  }
}

void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ8_0, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK8_0) QuantizeBlock8(src, &dst[i]);
}

void QuantizeRowQ8_1(const float* src, BlockQ8_1* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ8_1, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK8_1) {
    const float d = QuantizeBlock8(src, &dst[i]);
    int sum = 0;
    for (int j = 0; j < kQK8_1; ++j) sum += dst[i].qs[j];
    dst[i].s = Fp32ToFp16(static_cast<float>(sum) * d);
  }
}

void QuantizeRowQ4_K(const float* src, BlockQ4_K* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ4_K, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    uint8_t L[kQK_K];
    QuantizeSuperBlockK(src, 15, -1.0f, 20, &dst[i].d, &dst[i].dmin, dst[i].scales, L);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        dst[i].qs[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
      }
    }
  }
}

void QuantizeRowQ5_K(const float* src, BlockQ5_K* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ5_K, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    uint8_t L[kQK_K];
    QuantizeSuperBlockK(src, 31, -0.5f, 15, &dst[i].d, &dst[i].dmin, dst[i].scales, L);
    std::memset(dst[i].qh, 0, sizeof dst[i].qh);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        const int lo = L[64 * c + l];
        const int hi = L[64 * c + 32 + l];
        dst[i].qs[32 * c + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
        dst[i].qh[l] |= static_cast<uint8_t>(((lo >> 4) << (2 * c)) | ((hi >> 4) << (2 * c + 1)));
      }
    }
  }
}

void QuantizeRowQ6_K(const float* src, BlockQ6_K* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ6_K, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    BlockQ6_K& y = dst[i];
    int8_t L[kQK_K];
    float scales[16];
    float max_scale = 0, max_abs_scale = 0;
    for (int k = 0; k < 16; ++k) {
      scales[k] = MakeQxQuants(16, 32, src + 16 * k, L + 16 * k);
      const float abs_scale = std::fabs(scales[k]);
      if (abs_scale > max_abs_scale) {
        max_abs_scale = abs_scale;
        max_scale = scales[k];
      }
    }
    if (max_abs_scale < kGroupMaxEps) {
      std::memset(&y, 0, sizeof y);
      continue;
    }
    const float iscale = -128.f / max_scale;
    y.d = Fp32ToFp16(1 / iscale);
    for (int k = 0; k < 16; ++k) {
      y.scales[k] = static_cast<int8_t>(std::min(127, NearestInt(iscale * scales[k])));
    }
    for (int k = 0; k < 16; ++k) {
      const float d = Fp16ToFp32(y.d) * static_cast<float>(y.scales[k]);
      if (d == 0) continue;
      for (int l = 0; l < 16; ++l) {
        L[16 * k + l] =
            static_cast<int8_t>(std::clamp(NearestInt(src[16 * k + l] / d), -32, 31) + 32);
      }
    }
    for (int half = 0; half < 2; ++half) {
      const int8_t* q = L + 128 * half;
      for (int l = 0; l < 32; ++l) {
        y.ql[64 * half + l] = static_cast<uint8_t>((q[l] & 0xF) | ((q[l + 64] & 0xF) << 4));
        y.ql[64 * half + l + 32] =
            static_cast<uint8_t>((q[l + 32] & 0xF) | ((q[l + 96] & 0xF) << 4));
        y.qh[32 * half + l] =
            static_cast<uint8_t>((q[l] >> 4) | ((q[l + 32] >> 4) << 2) | ((q[l + 64] >> 4) << 4) |
                                 ((q[l + 96] >> 4) << 6));
      }
    }
  }
}

void QuantizeRowQ8_K(const float* src, BlockQ8_K* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ8_K, n);
  for (int64_t i = 0; i < nb; ++i, src += kQK_K) {
    BlockQ8_K& y = dst[i];
    float max, amax;
    SignedAbsMax(src, kQK_K, &max, &amax);
    if (amax == 0) {
      std::memset(&y, 0, sizeof y);
      continue;
    }
    const float iscale = -127.f / max;
    for (int j = 0; j < kQK_K; ++j) {
      y.qs[j] = static_cast<int8_t>(std::min(127, NearestInt(iscale * src[j])));
    }
    for (int k = 0; k < kQK_K / 16; ++k) {
      int sum = 0;
      for (int l = 0; l < 16; ++l) sum += y.qs[16 * k + l];
      y.bsums[k] = static_cast<int16_t>(sum);
    }
    y.d = 1 / iscale;
  }
}

bool CanQuantize(TensorType type) {
  using T = TensorType;
  switch (type) {
    case T::kF32:
    case T::kF16:
    case T::kBF16:
    case T::kQ4_0:
    case T::kQ4_1:
    case T::kQ5_0:
    case T::kQ5_1:
    case T::kQ8_0:
    case T::kQ8_1:
    case T::kQ4_K:
    case T::kQ5_K:
    case T::kQ6_K:
    case T::kQ8_K:
      return true;
    default:
      return false;
  }
}

size_t QuantizedRowBytes(TensorType type, int64_t n) {
  CheckRowLength(type, n, "QuantizedRowBytes");
  return RowBytes(GetTensorTypeTraits(type), static_cast<uint64_t>(n));
}

void QuantizeRow(TensorType type, const float* src, void* dst, int64_t n) {
  using T = TensorType;
  switch (type) {
    case T::kF32:
      CheckRowLength(type, n, "QuantizeRow");
      if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
      return;
    case T::kF16:
      return QuantizeRowF16(src, static_cast<uint16_t*>(dst), n);
    case T::kBF16:
      return QuantizeRowBF16(src, static_cast<uint16_t*>(dst), n);
    case T::kQ4_0:
      return QuantizeRowQ4_0(src, static_cast<BlockQ4_0*>(dst), n);
    case T::kQ4_1:
      return QuantizeRowQ4_1(src, static_cast<BlockQ4_1*>(dst), n);
    case T::kQ5_0:
      return QuantizeRowQ5_0(src, static_cast<BlockQ5_0*>(dst), n);
    case T::kQ5_1:
      return QuantizeRowQ5_1(src, static_cast<BlockQ5_1*>(dst), n);
    case T::kQ8_0:
      return QuantizeRowQ8_0(src, static_cast<BlockQ8_0*>(dst), n);
    case T::kQ8_1:
      return QuantizeRowQ8_1(src, static_cast<BlockQ8_1*>(dst), n);
    case T::kQ4_K:
      return QuantizeRowQ4_K(src, static_cast<BlockQ4_K*>(dst), n);
    case T::kQ5_K:
      return QuantizeRowQ5_K(src, static_cast<BlockQ5_K*>(dst), n);
    case T::kQ6_K:
      return QuantizeRowQ6_K(src, static_cast<BlockQ6_K*>(dst), n);
    case T::kQ8_K:
      return QuantizeRowQ8_K(src, static_cast<BlockQ8_K*>(dst), n);
    default:
      break;
  }
  const auto traits = FindTensorTypeTraits(static_cast<uint32_t>(type));
  Fail(ErrorKind::kUnsupported, "unsupported tensor type " +
                                    (traits ? std::string(traits->name)
                                            : "id " + std::to_string(static_cast<uint32_t>(type))) +
                                    " (QuantizeRow)");
}

}  // namespace tandem
