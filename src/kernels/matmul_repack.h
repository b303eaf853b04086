// Load-time repacking of weight matrices into the interleaved layout the AVX2 and AVX-512 kernels
// stream (avx2/matmul_packed.cpp: groups of 8 rows, one per ymm lane; avx512/matmul_packed.cpp:
// groups of 16 rows, one per zmm lane). The group size is the active path's (packed_group_rows
// of its kernel table), recorded in WeightMatrix::packed_group_rows.
//
// Layout: rows are taken in groups of R = 8 or 16 (the last group repeats the last row); a group
// holds its rows' blocks in order, and each block's bytes are interleaved over the R rows in
// small units, so that one 4R-byte load gives all R rows' next 4 bytes:
//  - Q4_0, Q8_0 (fp16 scale d, then the quants): the R scales (2R bytes), then for each 4-byte
//    chunk k of the quants the R rows' chunk k (4R bytes: row r at 4r);
//  - Q4_K (144 bytes = 36 dwords: d|dmin, 3 dwords of scales, 32 of quants): for each dword k
//    the R rows' dword k;
//  - Q6_K (210 bytes: ql, qh, scales = 52 dwords, then the fp16 d): the R rows' dword k for each
//    k < 52, then the R scales d (2R bytes).
// Every byte of the 8-row layout at offset o of a block is at offset 2o of the 16-row one (the
// offsets and units, from the block structs, are packed_layout.h's for the repack and kernels). A
// group is R * RowBytes(type, cols) bytes, so the copy costs the matrix's size again (rounded up
// to R rows); the row-major `data` stays valid for row gathers (MatMulRows) and for paths
// without packed kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "kernels/matmul.h"

namespace tandem::kernels {

// An owned interleaved copy of one matrix (64-byte aligned; base/huge_page_allocator.h).
class PackedMatrix {
 public:
  const uint8_t* data() const { return data_.get(); }
  size_t bytes() const { return bytes_; }
  int group_rows() const { return group_rows_; }
  // w with this copy as its packed layout.
  WeightMatrix Attach(WeightMatrix w) const {
    w.packed = data();
    w.packed_group_rows = group_rows_;
    return w;
  }

 private:
  struct Free {
    Free() : bytes(0) {}
    explicit Free(size_t n) : bytes(n) {}
    size_t bytes;
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Free> data_;
  size_t bytes_ = 0;
  int group_rows_ = 0;
  friend PackedMatrix PackWeightMatrix(const WeightMatrix& w);
};

// True if `type` has a packed layout (Q4_0, Q8_0, Q4_K, Q6_K).
bool HasPackedLayout(TensorType type);

// True if the active ISA path has kernels for the packed layout of `type` (then packing pays).
bool MatMulReadsPacked(TensorType type);

// Rows per group of the active path's packed layout (8 where it has no packed kernels).
int PackedGroupRows();

// Bytes of one packed group of `group_rows` rows of w.
size_t PackedGroupBytes(const WeightMatrix& w, int group_rows);

// The interleaved copy of w in the active path's group size (validated first; throws Error for a
// matrix MatMul rejects or a type without a packed layout). Use it with result.Attach(w); MatMul
// reads it while the active path's group size is the copy's.
PackedMatrix PackWeightMatrix(const WeightMatrix& w);

// Packs each of `matrices` that MatMul reads packed and is not packed yet: attaches its copy,
// releases the mapped pages it replaces, and keeps the copy in `packed`.
void PackMatrices(std::span<WeightMatrix* const> matrices,
                  std::vector<std::shared_ptr<const PackedMatrix>>& packed);

}  // namespace tandem::kernels
