// Interleaving of Q4_0/Q8_0 rows in groups of kPackRows (layout in matmul_repack.h).
#include "kernels/matmul_repack.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "base/error.h"
#include "kernels/matmul_kernel.h"

namespace tandem::kernels {
namespace {

// Quant bytes after the fp16 scale of a block, for the types with a packed layout; 0 otherwise.
size_t PackedQuantBytes(TensorType type) {
  switch (type) {
    case TensorType::kQ4_0:
      return 16;
    case TensorType::kQ8_0:
      return 32;
    default:
      return 0;
  }
}

}  // namespace

void PackedMatrix::Free::operator()(uint8_t* p) const {
  std::free(p);
}

bool HasPackedLayout(TensorType type) {
  return PackedQuantBytes(type) != 0;
}

size_t PackedGroupBytes(const WeightMatrix& w) {
  return kPackRows * RowBytes(*FindTensorTypeTraits(static_cast<uint32_t>(w.type)), w.cols);
}

PackedMatrix PackWeightMatrix(const WeightMatrix& w) {
  ValidateWeightMatrix(w);
  const size_t n = PackedQuantBytes(w.type);
  if (n == 0) {
    Fail(ErrorKind::kUnsupported, "PackWeightMatrix: no packed layout for this weight type");
  }
  const size_t block = 2 + n;
  const int64_t nb = w.cols / 32;
  const int64_t n_groups = (w.rows + kPackRows - 1) / kPackRows;
  const size_t group_bytes = PackedGroupBytes(w);
  PackedMatrix m;
  m.bytes_ = static_cast<size_t>(n_groups) * group_bytes;
  const size_t alloc = (m.bytes_ + 63) / 64 * 64;
  m.data_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, alloc > 0 ? alloc : 64)));
  if (!m.data_) throw std::bad_alloc();
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t g = 0; g < n_groups; ++g) {
    const uint8_t* rows[kPackRows];
    for (int r = 0; r < kPackRows; ++r) {
      const int64_t row = std::min<int64_t>(g * kPackRows + r, w.rows - 1);
      rows[r] = src + row * w.row_bytes;
    }
    uint8_t* out = m.data_.get() + g * group_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      for (int r = 0; r < kPackRows; ++r) std::memcpy(out + 2 * r, rows[r] + b * block, 2);
      out += 2 * kPackRows;
      for (size_t k = 0; k < n; k += 4) {
        for (int r = 0; r < kPackRows; ++r)
          std::memcpy(out + 4 * r, rows[r] + b * block + 2 + k, 4);
        out += 4 * kPackRows;
      }
    }
  }
  return m;
}

}  // namespace tandem::kernels
