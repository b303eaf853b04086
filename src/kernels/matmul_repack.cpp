// Interleaving of Q4_0/Q8_0/Q4_K/Q6_K rows in groups of 8 or 16 (layout in matmul_repack.h,
// offsets in packed_layout.h).
#include "kernels/matmul_repack.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/error.h"
#include "base/huge_page_allocator.h"
#include "base/mapped_file.h"
#include "kernels/matmul_kernel.h"
#include "kernels/packed_layout.h"

namespace tandem::kernels {
namespace {

constexpr int kMaxGroupRows = 16;

// How one block of a type with a packed layout is interleaved (packed_layout.h).
struct PackedFormat {
  packed::Segment segments[2];
  int n_segments = 0;
};

template <class Layout>
constexpr PackedFormat FormatFrom() {
  PackedFormat f;
  for (const packed::Segment& seg : Layout::kSegments) f.segments[f.n_segments++] = seg;
  return f;
}

PackedFormat FormatOf(TensorType type) {
  switch (type) {
    case TensorType::kQ4_0:
      return FormatFrom<packed::Q4_0>();
    case TensorType::kQ8_0:
      return FormatFrom<packed::Q8_0>();
    case TensorType::kQ4_K:
      return FormatFrom<packed::Q4_K>();
    case TensorType::kQ6_K:
      return FormatFrom<packed::Q6_K>();
    default:
      return {};
  }
}

}  // namespace

void PackedMatrix::Free::operator()(uint8_t* p) const {
  FreeLarge(p, bytes);
}

bool HasPackedLayout(TensorType type) {
  return FormatOf(type).n_segments > 0;
}

size_t PackedGroupBytes(const WeightMatrix& w, int group_rows) {
  return static_cast<size_t>(group_rows) *
         RowBytes(*FindTensorTypeTraits(static_cast<uint32_t>(w.type)), w.cols);
}

PackedMatrix PackWeightMatrix(const WeightMatrix& w) {
  ValidateWeightMatrix(w);
  const PackedFormat format = FormatOf(w.type);
  if (format.n_segments == 0) {
    Fail(ErrorKind::kUnsupported, "PackWeightMatrix: no packed layout for this weight type");
  }
  const TensorTypeTraits& traits = GetTensorTypeTraits(w.type);
  const size_t block = traits.block_bytes;
  const int64_t nb = w.cols / traits.block_size;
  const int group_rows = PackedGroupRows();
  if (group_rows < 1 || group_rows > kMaxGroupRows) {
    Fail(ErrorKind::kInternal, "PackWeightMatrix: " + std::to_string(group_rows) +
                                   " rows per group (at most " + std::to_string(kMaxGroupRows) +
                                   ")");
  }
  const int64_t n_groups = (w.rows + group_rows - 1) / group_rows;
  const size_t group_bytes = PackedGroupBytes(w, group_rows);
  PackedMatrix m;
  m.bytes_ = static_cast<size_t>(n_groups) * group_bytes;
  m.group_rows_ = group_rows;
  // Matrices of a huge page or more are their own huge-page advised mapping (transparent huge
  // pages are often "madvise" only): decoding streams them, and with 4 KiB pages every 4 KiB
  // read is a TLB miss.
  m.data_ = std::unique_ptr<uint8_t, PackedMatrix::Free>(
      static_cast<uint8_t*>(AllocateLarge(m.bytes_)), PackedMatrix::Free(m.bytes_));
  const auto* src = static_cast<const uint8_t*>(w.data);
  for (int64_t g = 0; g < n_groups; ++g) {
    const uint8_t* rows[kMaxGroupRows];
    for (int r = 0; r < group_rows; ++r) {
      const int64_t row = std::min<int64_t>(g * group_rows + r, w.rows - 1);
      rows[r] = src + row * w.row_bytes;
    }
    uint8_t* out = m.data_.get() + g * group_bytes;
    for (int64_t b = 0; b < nb; ++b) {
      for (int i = 0; i < format.n_segments; ++i) {
        const packed::Segment& seg = format.segments[i];
        for (size_t k = 0; k < seg.bytes; k += seg.unit) {
          for (int r = 0; r < group_rows; ++r) {
            std::memcpy(out, rows[r] + b * block + seg.offset + k, seg.unit);
            out += seg.unit;
          }
        }
      }
    }
  }
  return m;
}

void PackMatrices(std::span<WeightMatrix* const> matrices,
                  std::vector<std::shared_ptr<const PackedMatrix>>& packed) {
  for (WeightMatrix* m : matrices) {
    if (m->data == nullptr || m->packed != nullptr || !MatMulReadsPacked(m->type)) continue;
    auto copy = std::make_shared<const PackedMatrix>(PackWeightMatrix(*m));
    *m = copy->Attach(*m);
    ReleaseMappedPages(m->data, static_cast<size_t>(m->rows) * m->row_bytes);
    packed.push_back(std::move(copy));
  }
}

}  // namespace tandem::kernels
