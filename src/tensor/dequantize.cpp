// Scalar reference dequantization: one plain loop per ggml type, in ggml's operation order.
#include "tensor/dequantize.h"

#include <cstring>
#include <string>

#include "base/error.h"
#include "tensor/float16.h"

namespace tandem {
namespace {

// Number of blocks in a row of `n` values of `type`, after checking `n`.
int64_t Blocks(TensorType type, int64_t n) {
  CheckRowLength(type, n, "DequantizeRow");
  return n / GetTensorTypeTraits(type).block_size;
}

// Writes the 32 values of a legacy block whose element j is in the low nibble of qs[j] and
// element j+16 in the high nibble, mapping each 4-bit code through `decode(code, j)`.
template <typename Decode>
void NibblePairs(const uint8_t* qs, float* y, Decode decode) {
  for (int j = 0; j < 16; ++j) {
    y[j] = decode(qs[j] & 0xF, j);
    y[j + 16] = decode(qs[j] >> 4, j + 16);
  }
}

}  // namespace

void DequantizeRowF32(const float* src, float* dst, int64_t n) {
  CheckRowLength(TensorType::kF32, n, "DequantizeRow");
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void DequantizeRowF16(const uint16_t* src, float* dst, int64_t n) {
  CheckRowLength(TensorType::kF16, n, "DequantizeRow");
  for (int64_t i = 0; i < n; ++i) dst[i] = Fp16ToFp32(src[i]);
}

void DequantizeRowBF16(const uint16_t* src, float* dst, int64_t n) {
  CheckRowLength(TensorType::kBF16, n, "DequantizeRow");
  for (int64_t i = 0; i < n; ++i) dst[i] = Bf16ToFp32(src[i]);
}

void DequantizeRowQ4_0(const BlockQ4_0* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ4_0, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK4_0) {
    const float d = Fp16ToFp32(src[i].d);
    NibblePairs(src[i].qs, dst, [d](int q, int) { return static_cast<float>(q - 8) * d; });
  }
}

void DequantizeRowQ4_1(const BlockQ4_1* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ4_1, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK4_1) {
    const float d = Fp16ToFp32(src[i].d);
    const float m = Fp16ToFp32(src[i].m);
    NibblePairs(src[i].qs, dst, [d, m](int q, int) { return static_cast<float>(q) * d + m; });
  }
}

void DequantizeRowQ5_0(const BlockQ5_0* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ5_0, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK5_0) {
    const float d = Fp16ToFp32(src[i].d);
    uint32_t qh;
    std::memcpy(&qh, src[i].qh, sizeof qh);
    NibblePairs(src[i].qs, dst, [d, qh](int q, int e) {
      return static_cast<float>((q | static_cast<int>(((qh >> e) & 1) << 4)) - 16) * d;
    });
  }
}

void DequantizeRowQ5_1(const BlockQ5_1* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ5_1, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK5_1) {
    const float d = Fp16ToFp32(src[i].d);
    const float m = Fp16ToFp32(src[i].m);
    uint32_t qh;
    std::memcpy(&qh, src[i].qh, sizeof qh);
    NibblePairs(src[i].qs, dst, [d, m, qh](int q, int e) {
      return static_cast<float>(q | static_cast<int>(((qh >> e) & 1) << 4)) * d + m;
    });
  }
}

void DequantizeRowQ8_0(const BlockQ8_0* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ8_0, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK8_0) {
    const float d = Fp16ToFp32(src[i].d);
    for (int j = 0; j < kQK8_0; ++j) dst[j] = static_cast<float>(src[i].qs[j]) * d;
  }
}

void DequantizeRowQ8_1(const BlockQ8_1* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ8_1, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK8_1) {
    const float d = Fp16ToFp32(src[i].d);
    for (int j = 0; j < kQK8_1; ++j) dst[j] = static_cast<float>(src[i].qs[j]) * d;
  }
}

void DequantizeRowQ2_K(const BlockQ2_K* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ2_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const BlockQ2_K& b = src[i];
    const float d = Fp16ToFp32(b.d);
    const float dmin = Fp16ToFp32(b.dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int k = e / 16;
      const int r = e % 128;
      const int q = (b.qs[32 * (e / 128) + r % 32] >> (2 * (r / 32))) & 3;
      const float dl = d * static_cast<float>(b.scales[k] & 0xF);
      const float ml = dmin * static_cast<float>(b.scales[k] >> 4);
      dst[e] = dl * static_cast<float>(q) - ml;
    }
  }
}

void DequantizeRowQ3_K(const BlockQ3_K* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ3_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const BlockQ3_K& b = src[i];
    const float d = Fp16ToFp32(b.d);
    int8_t scales[16];
    UnpackScalesQ3K(b.scales, scales);
    for (int e = 0; e < kQK_K; ++e) {
      const int r = e % 128;
      const int q2 = (b.qs[32 * (e / 128) + r % 32] >> (2 * (r / 32))) & 3;
      const int hbit = (b.hmask[e % 32] >> (e / 32)) & 1;
      const float dl = d * static_cast<float>(scales[e / 16]);
      dst[e] = dl * static_cast<float>(q2 - (hbit ? 0 : 4));
    }
  }
}

void DequantizeRowQ4_K(const BlockQ4_K* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ4_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const BlockQ4_K& b = src[i];
    const float d = Fp16ToFp32(b.d);
    const float dmin = Fp16ToFp32(b.dmin);
    for (int j = 0; j < 8; ++j) {  // sub-block j = elements 32j..32j+31
      uint8_t sc, m;
      UnpackScaleMinK4(j, b.scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      const uint8_t* qs = b.qs + 32 * (j / 2);
      const int shift = 4 * (j % 2);
      for (int l = 0; l < 32; ++l) {
        dst[32 * j + l] = d1 * static_cast<float>((qs[l] >> shift) & 0xF) - m1;
      }
    }
  }
}

void DequantizeRowQ5_K(const BlockQ5_K* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ5_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const BlockQ5_K& b = src[i];
    const float d = Fp16ToFp32(b.d);
    const float dmin = Fp16ToFp32(b.dmin);
    for (int j = 0; j < 8; ++j) {  // sub-block j; its fifth bits are bit j of qh[l]
      uint8_t sc, m;
      UnpackScaleMinK4(j, b.scales, &sc, &m);
      const float d1 = d * static_cast<float>(sc);
      const float m1 = dmin * static_cast<float>(m);
      const uint8_t* qs = b.qs + 32 * (j / 2);
      const int shift = 4 * (j % 2);
      for (int l = 0; l < 32; ++l) {
        const int q = ((qs[l] >> shift) & 0xF) + (((b.qh[l] >> j) & 1) << 4);
        dst[32 * j + l] = d1 * static_cast<float>(q) - m1;
      }
    }
  }
}

void DequantizeRowQ6_K(const BlockQ6_K* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ6_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const BlockQ6_K& b = src[i];
    const float d = Fp16ToFp32(b.d);
    for (int e = 0; e < kQK_K; ++e) {
      const int half = e / 128;  // n in the spec
      const int k = (e % 128) / 32;
      const int l = e % 32;
      const uint8_t lo_byte = b.ql[64 * half + l + 32 * (k & 1)];
      const int lo = k < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
      const int hi = (b.qh[32 * half + l] >> (2 * k)) & 3;
      const int q = (lo | (hi << 4)) - 32;
      dst[e] = d * static_cast<float>(b.scales[e / 16]) * static_cast<float>(q);
    }
  }
}

void DequantizeRowQ8_K(const BlockQ8_K* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kQ8_K, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    for (int j = 0; j < kQK_K; ++j) dst[j] = src[i].d * static_cast<float>(src[i].qs[j]);
  }
}

void DequantizeRowIQ4_NL(const BlockIQ4_NL* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kIQ4_NL, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK4_NL) {
    const float d = Fp16ToFp32(src[i].d);
    NibblePairs(src[i].qs, dst,
                [d](int q, int) { return d * static_cast<float>(kIQ4NLValues[q]); });
  }
}

void DequantizeRowIQ4_XS(const BlockIQ4_XS* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kIQ4_XS, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQK_K) {
    const BlockIQ4_XS& b = src[i];
    const float d = Fp16ToFp32(b.d);
    for (int ib = 0; ib < 8; ++ib) {
      const float dl = d * static_cast<float>(UnpackScaleIQ4XS(b, ib));
      NibblePairs(b.qs + 16 * ib, dst + 32 * ib,
                  [dl](int q, int) { return dl * static_cast<float>(kIQ4NLValues[q]); });
    }
  }
}

void DequantizeRowMXFP4(const BlockMXFP4* src, float* dst, int64_t n) {
  const int64_t nb = Blocks(TensorType::kMXFP4, n);
  for (int64_t i = 0; i < nb; ++i, dst += kQKMxfp4) {
    const float d = E8M0ToFp32Half(src[i].e);
    NibblePairs(src[i].qs, dst,
                [d](int q, int) { return static_cast<float>(kMxfp4Values[q]) * d; });
  }
}

void DequantizeRow(TensorType type, const void* src, float* dst, int64_t n) {
  using T = TensorType;
  switch (type) {
    case T::kF32:
      return DequantizeRowF32(static_cast<const float*>(src), dst, n);
    case T::kF16:
      return DequantizeRowF16(static_cast<const uint16_t*>(src), dst, n);
    case T::kBF16:
      return DequantizeRowBF16(static_cast<const uint16_t*>(src), dst, n);
    case T::kQ4_0:
      return DequantizeRowQ4_0(static_cast<const BlockQ4_0*>(src), dst, n);
    case T::kQ4_1:
      return DequantizeRowQ4_1(static_cast<const BlockQ4_1*>(src), dst, n);
    case T::kQ5_0:
      return DequantizeRowQ5_0(static_cast<const BlockQ5_0*>(src), dst, n);
    case T::kQ5_1:
      return DequantizeRowQ5_1(static_cast<const BlockQ5_1*>(src), dst, n);
    case T::kQ8_0:
      return DequantizeRowQ8_0(static_cast<const BlockQ8_0*>(src), dst, n);
    case T::kQ2_K:
      return DequantizeRowQ2_K(static_cast<const BlockQ2_K*>(src), dst, n);
    case T::kQ3_K:
      return DequantizeRowQ3_K(static_cast<const BlockQ3_K*>(src), dst, n);
    case T::kQ4_K:
      return DequantizeRowQ4_K(static_cast<const BlockQ4_K*>(src), dst, n);
    case T::kQ5_K:
      return DequantizeRowQ5_K(static_cast<const BlockQ5_K*>(src), dst, n);
    case T::kQ6_K:
      return DequantizeRowQ6_K(static_cast<const BlockQ6_K*>(src), dst, n);
    case T::kIQ4_NL:
      return DequantizeRowIQ4_NL(static_cast<const BlockIQ4_NL*>(src), dst, n);
    case T::kIQ4_XS:
      return DequantizeRowIQ4_XS(static_cast<const BlockIQ4_XS*>(src), dst, n);
    case T::kMXFP4:
      return DequantizeRowMXFP4(static_cast<const BlockMXFP4*>(src), dst, n);
    default:
      break;
  }
  const auto traits = FindTensorTypeTraits(static_cast<uint32_t>(type));
  Fail(ErrorKind::kUnsupported, "unsupported tensor type " +
                                    (traits ? std::string(traits->name)
                                            : "id " + std::to_string(static_cast<uint32_t>(type))) +
                                    " (DequantizeRow)");
}

}  // namespace tandem
