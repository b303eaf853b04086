// Load-time repacking of weight matrices into the interleaved layout the AVX2 and AVX-512 kernels
// stream (avx2/matmul_packed.cpp: one group of 8 rows per ymm; avx512/matmul_packed.cpp: two
// groups per zmm).
//
// Layout: rows are taken in groups of kPackRows = 8 (the last group repeats the last row); a
// group holds its rows' blocks in order, and each block's bytes are interleaved over the 8 rows
// in small units, so that one 32-byte load gives all 8 rows' next 4 bytes:
//  - Q4_0, Q8_0 (fp16 scale d, then the quants): the 8 scales (16 bytes), then for each 4-byte
//    chunk k of the quants the 8 rows' chunk k (32 bytes: row r at 4r);
//  - Q4_K (144 bytes = 36 dwords: d|dmin, 3 dwords of scales, 32 of quants): for each dword k
//    the 8 rows' dword k;
//  - Q6_K (210 bytes: ql, qh, scales = 52 dwords, then the fp16 d): the 8 rows' dword k for each
//    k < 52, then the 8 scales d (16 bytes).
// A group is 8 * RowBytes(type, cols) bytes, so the copy costs the matrix's size again (rounded
// up to 8 rows); the row-major `data` stays valid for row gathers (MatMulRows) and for paths
// without packed kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "kernels/matmul.h"

namespace tandem::kernels {

// An owned interleaved copy of one matrix (64-byte aligned).
class PackedMatrix {
 public:
  const uint8_t* data() const { return data_.get(); }
  size_t bytes() const { return bytes_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t bytes_ = 0;
  friend PackedMatrix PackWeightMatrix(const WeightMatrix& w);
};

// True if `type` has a packed layout (Q4_0, Q8_0, Q4_K, Q6_K).
bool HasPackedLayout(TensorType type);

// True if the active ISA path has kernels for the packed layout of `type` (then packing pays).
bool MatMulReadsPacked(TensorType type);

// Bytes of one packed group of kPackRows rows.
size_t PackedGroupBytes(const WeightMatrix& w);

// The interleaved copy of w (validated first; throws Error for a matrix MatMul rejects or a type
// without a packed layout). Set w.packed = result.data() to use it.
PackedMatrix PackWeightMatrix(const WeightMatrix& w);

}  // namespace tandem::kernels
