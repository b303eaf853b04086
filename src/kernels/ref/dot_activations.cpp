// Scalar activation quantizers for MatMul: tensor/quantize.h's reference quantizers, repacked
// into the structure of arrays the kernels read (matmul_kernel.h).
#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/ref/dot_ref.h"
#include "tensor/float16.h"
#include "tensor/quantize.h"

namespace tandem::kernels::ref {
namespace {

void BlockSums(int64_t cols, const QuantizedRow& out) {
  for (int64_t k = 0; k < cols / 16; ++k) {
    int32_t sum = 0;
    for (int i = 0; i < 16; ++i) sum += out.qs[16 * k + i];
    out.sum16[k] = sum;
  }
  for (int64_t k = 0; k < cols / 32; ++k) out.sum32[k] = out.sum16[2 * k] + out.sum16[2 * k + 1];
}

}  // namespace

void QuantizeActivationsQ8_0(const float* x, int64_t cols, const QuantizedRow& out) {
  thread_local std::vector<BlockQ8_0> blocks;
  blocks.resize(cols / 32);
  QuantizeRowQ8_0(x, blocks.data(), cols);
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::memcpy(out.qs + 32 * b, blocks[b].qs, 32);
    out.d[b] = Fp16ToFp32(blocks[b].d);
  }
  BlockSums(cols, out);
}

void QuantizeActivationsQ8_1(const float* x, int64_t cols, const QuantizedRow& out) {
  thread_local std::vector<BlockQ8_1> blocks;
  blocks.resize(cols / 32);
  QuantizeRowQ8_1(x, blocks.data(), cols);
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::memcpy(out.qs + 32 * b, blocks[b].qs, 32);
    out.d[b] = Fp16ToFp32(blocks[b].d);
    out.s[b] = Fp16ToFp32(blocks[b].s);
  }
  BlockSums(cols, out);
}

void QuantizeActivationsQ8_K(const float* x, int64_t cols, const QuantizedRow& out) {
  thread_local std::vector<BlockQ8_K> blocks;
  blocks.resize(cols / 256);
  QuantizeRowQ8_K(x, blocks.data(), cols);
  for (size_t b = 0; b < blocks.size(); ++b) {
    std::memcpy(out.qs + 256 * b, blocks[b].qs, 256);
    out.d[b] = blocks[b].d;
  }
  BlockSums(cols, out);
}

}  // namespace tandem::kernels::ref
