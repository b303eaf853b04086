// The IQ4_NL and IQ4_XS encoders: what llama-quantize writes for them without an importance
// matrix (ggml's `quantize_iq4_nl` / `quantize_iq4_xs`), rewritten from docs/formats.md.
//
// Float expressions keep ggml's evaluation order so that the bytes match llama.cpp's for the
// same input.
#include "tensor/formats/iq4.h"

#include <algorithm>
#include <cmath>

namespace tandem::formats {
namespace {

// The codebook index whose value is nearest to x (x in units of the block scale): clamped to
// the ends, then a binary search; an exact midpoint between two entries takes the upper one.
int NearestCodebookIndex(float x) {
  const int8_t* v = kIQ4NLValues;
  if (x <= v[0]) return 0;
  if (x >= v[15]) return 15;
  int lo = 0, hi = 15;
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (x < v[mid]) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return x - v[hi - 1] < v[hi] - x ? hi - 1 : hi;
}

// Σw·q·x and Σw·q² (weights x², q the codebook values) with every value mapped to the codebook
// entry nearest to x·inv_scale; writes the indices to L when L is not null.
void CodebookFit(const float* x, float inv_scale, float* sumqx, float* sumq2, uint8_t* L) {
  *sumqx = 0;
  *sumq2 = 0;
  for (int j = 0; j < 32; ++j) {
    const int l = NearestCodebookIndex(inv_scale * x[j]);
    if (L != nullptr) L[j] = static_cast<uint8_t>(l);
    const float q = kIQ4NLValues[l];
    const float w = x[j] * x[j];
    *sumqx += w * q * x[j];
    *sumq2 += w * q * q;
  }
}

// The scale of 32 values x ≈ d · codebook[L] (ggml's IQ4 search with 7 tries each side, no
// importance matrix): the least-squares scale after mapping with d = max/127, then the
// least-squares scales after mapping with each inverse scale (t - 127)/max, t = -7..7, the
// candidate maximising (Σw·q·x)² / Σw·q² winning. 0 for an all-zero group (|x| < 1e-15).
float SearchCodebookScale(const float* x) {
  constexpr int kTries = 7;
  float max, amax;
  SignedAbsMax(x, 32, &max, &amax);
  if (amax < kGroupMaxEps) return 0.0f;
  const float d0 = -max / static_cast<float>(kIQ4NLValues[0]);
  float sumqx, sumq2;
  CodebookFit(x, 1 / d0, &sumqx, &sumq2, nullptr);
  float d = sumqx / sumq2;
  float best = d * sumqx;
  for (int t = -kTries; t <= kTries; ++t) {
    const float inv_scale = static_cast<float>(t + kIQ4NLValues[0]) / max;
    CodebookFit(x, inv_scale, &sumqx, &sumq2, nullptr);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      d = sumqx / sumq2;
      best = d * sumqx;
    }
  }
  return d;
}

// Maps 32 values to codebook indices with `inv_scale` and packs them: element j low and
// element j + 16 high in qs[j].
void PackCodebookIndices(const float* x, float inv_scale, uint8_t qs[16]) {
  uint8_t L[32];
  for (int j = 0; j < 32; ++j) L[j] = static_cast<uint8_t>(NearestCodebookIndex(inv_scale * x[j]));
  for (int j = 0; j < 16; ++j) qs[j] = static_cast<uint8_t>(L[j] | (L[j + 16] << 4));
}

}  // namespace

void IQ4_NL::Encode(const float* x, Block* y) {
  const float d = SearchCodebookScale(x);
  y->d = Fp32ToFp16(d);
  // The indices come from the f32 scale, not its fp16 rounding.
  PackCodebookIndices(x, d != 0 ? 1 / d : 0.0f, y->qs);
}

void IQ4_XS::Encode(const float* x, Block* y) {
  float scales[8];
  float max_scale = 0, max_abs_scale = 0;
  for (int ib = 0; ib < 8; ++ib) {
    scales[ib] = SearchCodebookScale(x + 32 * ib);
    const float abs_scale = std::fabs(scales[ib]);
    if (abs_scale > max_abs_scale) {
      max_abs_scale = abs_scale;
      max_scale = scales[ib];
    }
  }
  // An all-zero block stores d = -0 (fp16 0x8000), as ggml does.
  const float d = -max_scale / 32;
  y->d = Fp32ToFp16(d);
  const float inv_d = d != 0 ? 1 / d : 0.0f;
  y->scales_h = 0;
  for (int ib = 0; ib < 8; ++ib) {
    const int l = std::clamp(NearestInt(inv_d * scales[ib]), -32, 31);
    // The sub-block's indices come from the f32 super-scale times its 6-bit scale.
    const float dl = d * static_cast<float>(l);
    PackCodebookIndices(x + 32 * ib, dl != 0 ? 1 / dl : 0.0f, y->qs + 16 * ib);
    const int biased = l + 32;
    if (ib % 2 == 0) {
      y->scales_l[ib / 2] = static_cast<uint8_t>(biased & 0xF);
    } else {
      y->scales_l[ib / 2] |= static_cast<uint8_t>((biased & 0xF) << 4);
    }
    y->scales_h |= static_cast<uint16_t>((biased >> 4) << (2 * ib));
  }
}

template void EncodeBlocks<IQ4_NL>(const float*, void*, int64_t);
template void EncodeBlocks<IQ4_XS>(const float*, void*, int64_t);

}  // namespace tandem::formats
