// Scalar matmul tiles for quantized weights: decode a block to integers, take its exact integer
// dot with the quantized activations, then accumulate the per-family f32 formula (dot_ref.h).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/ref/dot_ref.h"
#include "tensor/blocks.h"
#include "tensor/float16.h"

namespace tandem::kernels::ref {
namespace {

// ---- 32-value blocks: Decode writes the integer weights w[32]; Scale/Min give d_w and m_w ----

struct Q4_0 {
  using Block = BlockQ4_0;
  static void Decode(const Block& b, int w[32]) {
    for (int j = 0; j < 16; ++j) {
      w[j] = (b.qs[j] & 0xF) - 8;
      w[j + 16] = (b.qs[j] >> 4) - 8;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
};

inline uint32_t HighBits(const uint8_t qh[4]) {
  uint32_t bits;
  std::memcpy(&bits, qh, sizeof bits);
  return bits;
}

struct Q5_0 {
  using Block = BlockQ5_0;
  static void Decode(const Block& b, int w[32]) {
    const uint32_t qh = HighBits(b.qh);
    for (int j = 0; j < 16; ++j) {
      w[j] = ((b.qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4)) - 16;
      w[j + 16] = ((b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4)) - 16;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
};

struct Q8_0 {
  using Block = BlockQ8_0;
  static void Decode(const Block& b, int w[32]) {
    for (int j = 0; j < 32; ++j) w[j] = b.qs[j];
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
};

struct IQ4_NL {
  using Block = BlockIQ4_NL;
  static void Decode(const Block& b, int w[32]) {
    for (int j = 0; j < 16; ++j) {
      w[j] = kIQ4NLValues[b.qs[j] & 0xF];
      w[j + 16] = kIQ4NLValues[b.qs[j] >> 4];
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
};

struct MXFP4 {
  using Block = BlockMXFP4;
  static void Decode(const Block& b, int w[32]) {
    for (int j = 0; j < 16; ++j) {
      w[j] = kMxfp4Values[b.qs[j] & 0xF];
      w[j + 16] = kMxfp4Values[b.qs[j] >> 4];
    }
  }
  static float Scale(const Block& b) { return E8M0ToFp32Half(b.e); }
};

struct Q4_1 {
  using Block = BlockQ4_1;
  static void Decode(const Block& b, int w[32]) {
    for (int j = 0; j < 16; ++j) {
      w[j] = b.qs[j] & 0xF;
      w[j + 16] = b.qs[j] >> 4;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.m); }
};

struct Q5_1 {
  using Block = BlockQ5_1;
  static void Decode(const Block& b, int w[32]) {
    const uint32_t qh = HighBits(b.qh);
    for (int j = 0; j < 16; ++j) {
      w[j] = (b.qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
      w[j + 16] = (b.qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.m); }
};

inline int DotBlock32(const int w[32], const int8_t* a) {
  int sum = 0;
  for (int i = 0; i < 32; ++i) sum += w[i] * a[i];
  return sum;
}

template <class K>
void TileQ8_0Family(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy) {
  const int64_t nb = acts.cols / 32;
  for (int r = 0; r < tile.n_rows; ++r) {
    const auto* blocks = reinterpret_cast<const typename K::Block*>(tile.rows[r]);
    for (int64_t t = 0; t < acts.n_rows; ++t) {
      const int8_t* qs = acts.qs + t * acts.qs_stride;
      const float* d = acts.d + t * acts.d_stride;
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        int w[32];
        K::Decode(blocks[b], w);
        const int sumi = DotBlock32(w, qs + 32 * b);
        acc = std::fma(K::Scale(blocks[b]) * d[b], static_cast<float>(sumi), acc);
      }
      y[t * ldy + r] = acc;
    }
  }
}

template <class K>
void TileQ8_1Family(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy) {
  const int64_t nb = acts.cols / 32;
  for (int r = 0; r < tile.n_rows; ++r) {
    const auto* blocks = reinterpret_cast<const typename K::Block*>(tile.rows[r]);
    for (int64_t t = 0; t < acts.n_rows; ++t) {
      const int8_t* qs = acts.qs + t * acts.qs_stride;
      const float* d = acts.d + t * acts.d_stride;
      const float* s = acts.s + t * acts.d_stride;
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        int w[32];
        K::Decode(blocks[b], w);
        const int sumi = DotBlock32(w, qs + 32 * b);
        acc = std::fma(K::Scale(blocks[b]) * d[b], static_cast<float>(sumi), acc);
        acc = std::fma(K::Min(blocks[b]), s[b], acc);
      }
      y[t * ldy + r] = acc;
    }
  }
}

// ---- K-quants (and IQ4_XS): Decode writes w[256], per-16 sub-scales sc[16] and mins m[16] ----

struct Q2_K {
  using Block = BlockQ2_K;
  static constexpr bool kHasMins = true;
  static void Decode(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int e = 0; e < 256; ++e) {
      const int n = e / 128, j = (e % 128) / 32, l = e % 32;
      w[e] = (b.qs[32 * n + l] >> (2 * j)) & 3;
    }
    for (int k = 0; k < 16; ++k) {
      sc[k] = b.scales[k] & 0xF;
      m[k] = b.scales[k] >> 4;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.dmin); }
};

struct Q3_K {
  using Block = BlockQ3_K;
  static constexpr bool kHasMins = false;
  static void Decode(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int e = 0; e < 256; ++e) {
      const int n = e / 128, j = (e % 128) / 32, l = e % 32;
      const int low = (b.qs[32 * n + l] >> (2 * j)) & 3;
      const int high = (b.hmask[l] >> (4 * n + j)) & 1;
      w[e] = low + 4 * high - 4;
    }
    int8_t scales[16];
    UnpackScalesQ3K(b.scales, scales);
    for (int k = 0; k < 16; ++k) {
      sc[k] = scales[k];
      m[k] = 0;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block&) { return 0.0f; }
};

struct IQ4_XS {
  using Block = BlockIQ4_XS;
  static constexpr bool kHasMins = false;
  static void Decode(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int ib = 0; ib < 8; ++ib) {
      for (int j = 0; j < 16; ++j) {
        w[32 * ib + j] = kIQ4NLValues[b.qs[16 * ib + j] & 0xF];
        w[32 * ib + 16 + j] = kIQ4NLValues[b.qs[16 * ib + j] >> 4];
      }
      sc[2 * ib] = sc[2 * ib + 1] = UnpackScaleIQ4XS(b, ib);
      m[2 * ib] = m[2 * ib + 1] = 0;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block&) { return 0.0f; }
};

struct Q4_K {
  using Block = BlockQ4_K;
  static constexpr bool kHasMins = true;
  static void Decode(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        w[64 * c + l] = b.qs[32 * c + l] & 0xF;
        w[64 * c + 32 + l] = b.qs[32 * c + l] >> 4;
      }
    }
    for (int j = 0; j < 8; ++j) {
      uint8_t s, mn;
      UnpackScaleMinK4(j, b.scales, &s, &mn);
      sc[2 * j] = sc[2 * j + 1] = s;
      m[2 * j] = m[2 * j + 1] = mn;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.dmin); }
};

struct Q5_K {
  using Block = BlockQ5_K;
  static constexpr bool kHasMins = true;
  static void Decode(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        w[64 * c + l] = (b.qs[32 * c + l] & 0xF) | (((b.qh[l] >> (2 * c)) & 1) << 4);
        w[64 * c + 32 + l] = (b.qs[32 * c + l] >> 4) | (((b.qh[l] >> (2 * c + 1)) & 1) << 4);
      }
    }
    for (int j = 0; j < 8; ++j) {
      uint8_t s, mn;
      UnpackScaleMinK4(j, b.scales, &s, &mn);
      sc[2 * j] = sc[2 * j + 1] = s;
      m[2 * j] = m[2 * j + 1] = mn;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block& b) { return Fp16ToFp32(b.dmin); }
};

struct Q6_K {
  using Block = BlockQ6_K;
  static constexpr bool kHasMins = false;
  static void Decode(const Block& b, int w[256], int sc[16], int m[16]) {
    for (int e = 0; e < 256; ++e) {
      const int n = e / 128, k = (e % 128) / 32, l = e % 32;
      const uint8_t lo_byte = b.ql[64 * n + l + 32 * (k & 1)];
      const int lo = k < 2 ? (lo_byte & 0xF) : (lo_byte >> 4);
      const int hi = (b.qh[32 * n + l] >> (2 * k)) & 3;
      w[e] = (lo | (hi << 4)) - 32;
    }
    for (int k = 0; k < 16; ++k) {
      sc[k] = b.scales[k];
      m[k] = 0;
    }
  }
  static float Scale(const Block& b) { return Fp16ToFp32(b.d); }
  static float Min(const Block&) { return 0.0f; }
};

template <class K>
void TileQ8_KFamily(const WeightTile& tile, const QuantizedActivations& acts, float* y,
                    int64_t ldy) {
  const int64_t nb = acts.cols / 256;
  for (int r = 0; r < tile.n_rows; ++r) {
    const auto* blocks = reinterpret_cast<const typename K::Block*>(tile.rows[r]);
    for (int64_t t = 0; t < acts.n_rows; ++t) {
      const int8_t* qs = acts.qs + t * acts.qs_stride;
      const float* d = acts.d + t * acts.d_stride;
      const int32_t* sum16 = acts.sum16 + t * acts.sum16_stride;
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        int w[256], sc[16], m[16];
        K::Decode(blocks[b], w, sc, m);
        int isum = 0, imin = 0;
        for (int k = 0; k < 16; ++k) {
          int sub = 0;
          for (int i = 16 * k; i < 16 * k + 16; ++i) sub += w[i] * qs[256 * b + i];
          isum += sc[k] * sub;
          imin += m[k] * sum16[16 * b + k];
        }
        acc = std::fma(K::Scale(blocks[b]) * d[b], static_cast<float>(isum), acc);
        if constexpr (K::kHasMins) {
          acc = std::fma(-(K::Min(blocks[b]) * d[b]), static_cast<float>(imin), acc);
        }
      }
      y[t * ldy + r] = acc;
    }
  }
}

}  // namespace

#define TANDEM_Q8_0_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, TileQ8_0Family<Name>)
#define TANDEM_Q8_1_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, TileQ8_1Family<Name>)
#define TANDEM_Q8_K_TILE(Name) TANDEM_DEFINE_QUANT_TILE(Name, TileQ8_KFamily<Name>)
TANDEM_MATMUL_Q8_0_TILES(TANDEM_Q8_0_TILE)
TANDEM_MATMUL_Q8_1_TILES(TANDEM_Q8_1_TILE)
TANDEM_MATMUL_Q8_K_TILES(TANDEM_Q8_K_TILE)

}  // namespace tandem::kernels::ref
