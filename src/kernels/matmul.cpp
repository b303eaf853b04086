// MatMul's ISA-independent half: validation, activation quantization, tiling over output rows,
// thread partitioning and dispatch to the active ISA's micro-kernels (matmul_kernel.h).
#include "kernels/matmul.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernels/isa.h"
#include "kernels/matmul_kernel.h"
#include "kernels/matmul_repack.h"
#include "kernels/successor_prefetch.h"
#include "tensor/blocks.h"
#include "tensor/formats/float_types.h"
#include "tensor/type_traits.h"

namespace tandem::kernels {
namespace {

// How a weight type meets its activations.
enum class Family {
  kFloat,  // F32/F16/BF16 weights, f32 activations
  kQ8_0,   // activations quantized to Q8_0
  kQ8_1,   // ... to Q8_1
  kQ8_K,   // ... to Q8_K
  kNone,   // not readable
};

// Float types by their list (matmul_kernel.h), the others by their codec's activation format.
Family FamilyOf(TensorType type) {
#define TANDEM_FLOAT_CASE(Name) case TensorType::k##Name:
  switch (type) {
    TANDEM_MATMUL_FLOAT_TILES(TANDEM_FLOAT_CASE)
    return Family::kFloat;
    default:
      break;
  }
#undef TANDEM_FLOAT_CASE
  formats::DotFamily dot = formats::DotFamily::kNone;
#define TANDEM_CODEC_CASE(Name, name) \
  if (type == TensorType::k##Name) dot = formats::Name::kDot;
  TANDEM_CODEC_TYPES(TANDEM_CODEC_CASE)
#undef TANDEM_CODEC_CASE
  switch (dot) {
    case formats::DotFamily::kQ8_0:
      return Family::kQ8_0;
    case formats::DotFamily::kQ8_1:
      return Family::kQ8_1;
    case formats::DotFamily::kQ8_K:
      return Family::kQ8_K;
    case formats::DotFamily::kNone:
      break;
  }
  return Family::kNone;
}

// Byte alignment the kernels need for a row of this type (the alignment of its block struct).
size_t RowAlignment(TensorType type) {
  switch (type) {
    case TensorType::kF32:
      return 4;
    case TensorType::kMXFP4:
      return 1;
    default:
      return 2;  // f16/bf16 scalars and every block with an fp16 field
  }
}

size_t AlignUp(size_t n, size_t a) {
  return (n + a - 1) / a * a;
}

// A growable 64-byte-aligned byte buffer, kept per thread so steady-state calls do not allocate.
class Scratch {
 public:
  uint8_t* Get(size_t bytes) {
    if (bytes + 64 > storage_.size()) storage_.resize(bytes + 64);
    auto p = reinterpret_cast<uintptr_t>(storage_.data());
    return storage_.data() + (AlignUp(p, 64) - p);
  }

 private:
  std::vector<uint8_t> storage_;
};

// Weight bytes x activation rows under which a product is not worth spreading over the pool.
// Below E2B's per-layer-embedding gate and projection, so that those go to the pool instead of
// leaving the workers idle while the calling thread does them alone.
constexpr uint64_t kInlineWorkBytes = 128 * 1024;

// Activation values (T x cols) under which the rows are quantized on the calling thread: the
// pool's hand-off costs more than the work (verifications of a few rows).
constexpr int64_t kInlineQuantizeValues = 64 * 1024;

// Quantizes x[T][cols] for `family` into the structure of arrays the kernels read, one row per
// task (few rows: on the calling thread); `quantize` is the active path's quantizer (all are
// bit-exact with the reference).
QuantizedActivations QuantizeActivations(Family family, QuantizeRowFn quantize, const float* x,
                                         int64_t T, int64_t cols, ThreadPool& pool) {
  // One buffer per family and thread: MatMulEach holds one family's while it quantizes another.
  thread_local Scratch scratches[static_cast<int>(Family::kNone)];
  Scratch& scratch = scratches[static_cast<int>(family)];
  const int64_t block = family == Family::kQ8_K ? 256 : 32;
  QuantizedActivations a;
  a.n_rows = T;
  a.cols = cols;
  a.qs_stride = static_cast<int64_t>(AlignUp(cols, 64));
  a.d_stride = static_cast<int64_t>(AlignUp(cols / block, 16));
  a.sum16_stride = static_cast<int64_t>(AlignUp(cols / 16, 16));
  a.sum32_stride = static_cast<int64_t>(AlignUp(cols / 32, 16));
  const size_t qs_bytes = T * a.qs_stride;
  const size_t d_bytes = T * a.d_stride * sizeof(float);
  const size_t sum16_bytes = T * a.sum16_stride * sizeof(int32_t);
  const size_t sum32_bytes = T * a.sum32_stride * sizeof(int32_t);
  // Q4_0's block offsets (QuantizedActivations::neg8_sum32): its tiles read Q8_0 activations.
  const bool neg8 = family == Family::kQ8_0;
  uint8_t* base = scratch.Get(qs_bytes + 2 * d_bytes + sum16_bytes + (neg8 ? 2 : 1) * sum32_bytes);
  auto* qs = reinterpret_cast<int8_t*>(base);
  auto* d = reinterpret_cast<float*>(base + qs_bytes);
  auto* s = reinterpret_cast<float*>(base + qs_bytes + d_bytes);
  auto* sum16 = reinterpret_cast<int32_t*>(base + qs_bytes + 2 * d_bytes);
  auto* sum32 = reinterpret_cast<int32_t*>(base + qs_bytes + 2 * d_bytes + sum16_bytes);
  int32_t* neg8_sum32 = neg8 ? sum32 + T * a.sum32_stride : nullptr;
  auto quantize_row = [&](size_t t) {
    const QuantizedRow row{qs + t * a.qs_stride, d + t * a.d_stride, s + t * a.d_stride,
                           sum16 + t * a.sum16_stride, sum32 + t * a.sum32_stride};
    quantize(x + t * cols, cols, row);
    if (neg8_sum32 == nullptr) return;
    for (int64_t b = 0; b < cols / 32; ++b) {
      neg8_sum32[t * a.sum32_stride + b] = -8 * row.sum32[b];
    }
  };
  if (T * cols < kInlineQuantizeValues) {
    for (int64_t t = 0; t < T; ++t) quantize_row(t);
  } else {
    pool.ParallelFor(static_cast<size_t>(T), quantize_row);
  }
  a.qs = qs;
  a.d = d;
  a.s = s;
  a.sum16 = sum16;
  a.sum32 = sum32;
  a.neg8_sum32 = neg8_sum32;
  return a;
}

// The kernels of the active path for each family (ref where the ISA has none).
struct Kernels {
  FloatTileFn float_tile = nullptr;
  QuantTileFn quant_tile = nullptr;
  QuantizeRowFn quantize = nullptr;
};

// The ISA table's choice (isa.cpp: AVX2's quantized kernels on AVX-512 without VNNI, the GFNI
// ones where GfniActive()).
const MatMulKernelTable& TableFor(Isa isa, bool quantized) {
  const KernelTable& t = KernelsFor(isa);
  return quantized ? t.matmul_quant() : t.matmul_float();
}

Kernels SelectKernels(TensorType type) {
  const Isa isa = ActiveIsa();
  const size_t id = static_cast<size_t>(type);
  Kernels k;
  k.float_tile = TableFor(isa, false).float_tile[id];
  if (k.float_tile == nullptr) k.float_tile = ref::MatMulKernels().float_tile[id];
  k.quant_tile = TableFor(isa, true).quant_tile[id];
  if (k.quant_tile == nullptr) k.quant_tile = ref::MatMulKernels().quant_tile[id];
  const MatMulKernelTable& q = TableFor(isa, true);
  const MatMulKernelTable& r = ref::MatMulKernels();
  switch (FamilyOf(type)) {
    case Family::kQ8_0:
      k.quantize = q.quantize_q8_0 ? q.quantize_q8_0 : r.quantize_q8_0;
      break;
    case Family::kQ8_1:
      k.quantize = q.quantize_q8_1 ? q.quantize_q8_1 : r.quantize_q8_1;
      break;
    case Family::kQ8_K:
      k.quantize = q.quantize_q8_k ? q.quantize_q8_k : r.quantize_q8_k;
      break;
    default:
      break;
  }
  return k;
}

// Runs the tiles [begin, end) of an output of n_out rows; row i of the output is weight row
// `row_index(i)`.
template <class RowIndex>
void RunTiles(const WeightMatrix& w, Family family, const Kernels& k, RowIndex row_index,
              bool dense, int64_t n_out, const float* x, int64_t T,
              const QuantizedActivations& acts, float* y, size_t begin, size_t end) {
  const auto* data = static_cast<const uint8_t*>(w.data);
  for (size_t tile_index = begin; tile_index < end; ++tile_index) {
    const int64_t first = static_cast<int64_t>(tile_index) * kTileRows;
    WeightTile tile;
    tile.n_rows = static_cast<int>(std::min<int64_t>(kTileRows, n_out - first));
    for (int i = 0; i < kTileRows; ++i) {
      const int64_t r = row_index(first + std::min(i, tile.n_rows - 1));
      tile.rows[i] = data + r * w.row_bytes;
    }
    // Dense row ranges: prefetch the next tile of this thread's range while this one computes.
    if (dense && tile_index + 1 < end) {
      const int64_t next = first + kTileRows;
      tile.prefetch = data + next * w.row_bytes;
      tile.prefetch_bytes =
          static_cast<size_t>(std::min<int64_t>(kTileRows, n_out - next)) * w.row_bytes;
    }
    float* y_tile = y + first;
    switch (family) {
      case Family::kFloat:
        k.float_tile(tile, w.cols, x, w.cols, T, y_tile, n_out);
        break;
      default:
        k.quant_tile(tile, acts, y_tile, n_out);
        break;
    }
  }
}

// The active path's kernel for packed `type`, or null where it reads row-major weights.
PackedTileFn PackedKernel(TensorType type) {
  return TableFor(ActiveIsa(), true).packed_tile[static_cast<size_t>(type)];
}

// The active path's kernel for w's packed copy, or null where it reads `data` (no copy, no
// kernel, or a copy in another path's group size).
PackedTileFn PackedKernel(const WeightMatrix& w) {
  if (w.packed == nullptr) return nullptr;
  const MatMulKernelTable& t = TableFor(ActiveIsa(), true);
  if (t.packed_group_rows != w.packed_group_rows) return nullptr;
  return t.packed_tile[static_cast<size_t>(w.type)];
}

// Weight bytes a packed tile should span when it is reused for many activation rows: small
// enough to stay in L2 while the activations stream past it.
constexpr size_t kPackedTileBytes = 96 * 1024;
constexpr int64_t kPackedTileMaxRows = 256;
// Decode tiles of two groups of Q4_0 or Q8_0 (the AVX-512 kernels read them as two streams at
// once; the K-quant kernels read groups one at a time) from this group size up: two streams
// pay for long rows and cost the short ones (1536 or 2048 columns of Q4_0: E2B's q/k/v, gate, up
// and head), bench/README.md § Kernel choices.
constexpr size_t kPairedDecodeGroupBytes = 20 * 1024;

// How a dense product is cut into tiles: packed tiles of tile_groups groups where the active
// path reads w's packed copy, row-major tiles of kTileRows rows otherwise.
struct DensePlan {
  const WeightMatrix* w = nullptr;
  float* y = nullptr;
  Family family = Family::kNone;
  Kernels k;
  PackedTileFn packed = nullptr;
  int64_t tile_groups = 0, n_groups = 0;
  size_t group_bytes = 0;
  size_t n_tiles = 0;
  uint64_t work = 0;  // weight bytes x activation rows
};

DensePlan PlanDense(const WeightMatrix& w, float* y, int64_t T) {
  DensePlan p;
  p.w = &w;
  p.y = y;
  p.family = FamilyOf(w.type);
  p.k = SelectKernels(w.type);
  p.work = static_cast<uint64_t>(w.rows) * w.row_bytes * static_cast<uint64_t>(T);
  p.packed = p.family == Family::kFloat ? nullptr : PackedKernel(w);
  if (p.packed == nullptr) {
    p.n_tiles = static_cast<size_t>((w.rows + kTileRows - 1) / kTileRows);
    return p;
  }
  const int group_rows = w.packed_group_rows;
  p.group_bytes = PackedGroupBytes(w, group_rows);
  p.n_groups = (w.rows + group_rows - 1) / group_rows;
  // Decode: 16-row tiles for an even thread split, or tiles of two groups where Q4_0/Q8_0 groups
  // are long (kPairedDecodeGroupBytes); verifications of up to kPackedPairRows rows: tiles of two
  // groups; larger batches: L2-sized tiles of an even number of groups (the AVX-512 Q4_0/Q8_0
  // kernels take those groups in pairs).
  const int64_t min_groups = std::max(1, kTileRows / group_rows);
  const int64_t pair_groups = std::max<int64_t>(min_groups, 2);
  const bool paired_decode = p.family == Family::kQ8_0 && p.group_bytes >= kPairedDecodeGroupBytes;
  p.tile_groups = T == 1 && !paired_decode ? min_groups : pair_groups;
  if (T > kPackedPairRows) {
    p.tile_groups = std::clamp<int64_t>(kPackedTileBytes / p.group_bytes / 2 * 2, pair_groups,
                                        kPackedTileMaxRows / group_rows);
  }
  p.n_tiles = static_cast<size_t>((p.n_groups + p.tile_groups - 1) / p.tile_groups);
  return p;
}

// Tiles [begin, end) of a planned product.
void RunDense(const DensePlan& p, const float* x, int64_t T, const QuantizedActivations& acts,
              size_t begin, size_t end) {
  const WeightMatrix& w = *p.w;
  if (p.packed == nullptr) {
    RunTiles(
        w, p.family, p.k, [](int64_t i) { return i; }, /*dense=*/true, w.rows, x, T, acts, p.y,
        begin, end);
    return;
  }
  const int group_rows = w.packed_group_rows;
  for (size_t i = begin; i < end; ++i) {
    const int64_t g0 = static_cast<int64_t>(i) * p.tile_groups;
    PackedTile tile;
    tile.groups = w.packed + g0 * p.group_bytes;
    tile.group_bytes = static_cast<int64_t>(p.group_bytes);
    tile.end = w.packed + p.n_groups * p.group_bytes;
    tile.n_groups = static_cast<int>(std::min(p.tile_groups, p.n_groups - g0));
    tile.n_rows =
        static_cast<int>(std::min<int64_t>(tile.n_groups * group_rows, w.rows - g0 * group_rows));
    p.packed(tile, acts, p.y + g0 * group_rows, w.rows);
  }
}

// The weight bytes of tiles [first, first + n) of a planned product, up to its end and to
// SuccessorPrefetch::kBytesPerThread.
ThreadPool::PrefetchRange TileBytes(const DensePlan& p, size_t first, size_t n) {
  const WeightMatrix& w = *p.w;
  size_t begin = 0, end = 0;
  if (p.packed != nullptr) {
    const size_t tile_bytes = p.tile_groups * p.group_bytes;
    begin = first * tile_bytes;
    end = std::min(begin + n * tile_bytes, p.n_groups * p.group_bytes);
  } else {
    const size_t tile_bytes = kTileRows * w.row_bytes;
    begin = first * tile_bytes;
    end = std::min(begin + n * tile_bytes, w.rows * w.row_bytes);
  }
  const auto* base = static_cast<const uint8_t*>(p.packed != nullptr ? w.packed : w.data);
  return {base + begin, std::min(end - begin, SuccessorPrefetch::kBytesPerThread)};
}

bool Quantized(Family family) {
  return family == Family::kQ8_0 || family == Family::kQ8_1 || family == Family::kQ8_K;
}

// Products MatMulEach takes at once.
constexpr size_t kMaxProducts = 8;

// Dense products of the same activations x[T][cols] (products.size() <= kMaxProducts, cols > 0,
// T > 0): x is quantized once per family, and every product's tiles are one job on the pool.
// Small work (the assistant's layers, per-head projections) runs on the calling thread: waking
// the pool costs more than the work. Which thread runs a tile never changes its result.
void RunDenseProducts(std::span<const MatMulProduct> products, const float* x, int64_t T,
                      ThreadPool& pool) {
  std::array<DensePlan, kMaxProducts> plans;
  std::array<QuantizedActivations, static_cast<size_t>(Family::kNone)> acts;
  std::array<bool, static_cast<size_t>(Family::kNone)> quantized{};
  size_t n_tiles = 0;
  uint64_t work = 0;
  for (size_t i = 0; i < products.size(); ++i) {
    DensePlan& p = plans[i];
    p = PlanDense(*products[i].w, products[i].y, T);
    const auto f = static_cast<size_t>(p.family);
    if (Quantized(p.family) && !quantized[f]) {
      acts[f] = QuantizeActivations(p.family, p.k.quantize, x, T, p.w->cols, pool);
      quantized[f] = true;
    }
    n_tiles += p.n_tiles;
    work += p.work;
  }
  // Tiles [begin, end) of all the products, numbered one product after the other.
  auto run = [&](size_t begin, size_t end) {
    size_t first = 0;
    for (size_t i = 0; i < products.size() && begin < end; ++i) {
      const DensePlan& p = plans[i];
      if (begin < first + p.n_tiles) {
        const size_t stop = std::min(end, first + p.n_tiles);
        RunDense(p, x, T, acts[static_cast<size_t>(p.family)], begin - first, stop - first);
        begin = stop;
      }
      first += p.n_tiles;
    }
  };
  if (work < kInlineWorkBytes) {
    run(0, n_tiles);
    return;
  }
  // Where each thread's share starts, in the weights, for the worker that prefetches it ahead
  // (successor_prefetch.h) while the calling thread does the serial work between products.
  thread_local std::vector<ThreadPool::PrefetchRange> shares;
  shares.assign(static_cast<size_t>(pool.size()), {});
  for (int t = 1; t < pool.size(); ++t) {
    size_t tile = pool.ShareBegin(n_tiles, t), share = pool.ShareBegin(n_tiles, t + 1) - tile;
    for (size_t i = 0; i < products.size(); tile -= plans[i++].n_tiles) {
      if (tile < plans[i].n_tiles) {
        shares[t] = TileBytes(plans[i], tile, share);
        break;
      }
    }
  }
  thread_local SuccessorPrefetch successors;
  const auto then = successors.Run({products[0].w->data, T}, shares);
  pool.ParallelForBalanced(
      n_tiles, [&](size_t begin, size_t end, int) { run(begin, end); }, then);
}

// A gathered product (MatMulRows): row-major tiles of the rows `rows` lists.
void RunGathered(const WeightMatrix& w, const int32_t* rows, int64_t n_out, const float* x,
                 int64_t T, float* y, ThreadPool& pool) {
  const Family family = FamilyOf(w.type);
  const Kernels k = SelectKernels(w.type);
  QuantizedActivations acts;
  if (Quantized(family)) acts = QuantizeActivations(family, k.quantize, x, T, w.cols, pool);
  const auto row_index = [rows](int64_t i) { return static_cast<int64_t>(rows[i]); };
  const size_t n_tiles = static_cast<size_t>((n_out + kTileRows - 1) / kTileRows);
  if (static_cast<uint64_t>(n_out) * w.row_bytes * static_cast<uint64_t>(T) < kInlineWorkBytes) {
    RunTiles(w, family, k, row_index, /*dense=*/false, n_out, x, T, acts, y, 0, n_tiles);
    return;
  }
  pool.ParallelForBalanced(n_tiles, [&](size_t begin, size_t end, int) {
    RunTiles(w, family, k, row_index, /*dense=*/false, n_out, x, T, acts, y, begin, end);
  });
}

std::string TypeName(TensorType type) {
  const auto traits = FindTensorTypeTraits(static_cast<uint32_t>(type));
  return traits ? std::string(traits->name) : "id " + std::to_string(static_cast<uint32_t>(type));
}

}  // namespace

WeightMatrix DenseWeightMatrix(TensorType type, const void* data, int64_t rows, int64_t cols) {
  WeightMatrix w;
  w.type = type;
  w.data = data;
  w.rows = rows;
  w.cols = cols;
  const auto traits = FindTensorTypeTraits(static_cast<uint32_t>(type));
  if (traits && traits->block_size > 0 && cols >= 0) w.row_bytes = RowBytes(*traits, cols);
  return w;
}

WeightMatrix FirstRows(const WeightMatrix& w, int64_t rows) {
  const bool whole_groups = w.packed == nullptr || w.packed_group_rows <= 0 ||
                            rows % w.packed_group_rows == 0 || rows == w.rows;
  if (rows < 0 || rows > w.rows || !whole_groups) {
    Fail(ErrorKind::kInvalidArgument,
         "FirstRows: " + std::to_string(rows) + " rows of a matrix of " + std::to_string(w.rows) +
             (w.packed != nullptr
                  ? " packed in groups of " + std::to_string(w.packed_group_rows) + " rows"
                  : std::string()));
  }
  WeightMatrix first = w;
  first.rows = rows;
  return first;
}

bool MatMulReadsPacked(TensorType type) {
  return PackedKernel(type) != nullptr;
}

int PackedGroupRows() {
  const int rows = TableFor(ActiveIsa(), true).packed_group_rows;
  return rows > 0 ? rows : 8;
}

bool MatMulSupportsType(TensorType type) {
  return FamilyOf(type) != Family::kNone;
}

void ValidateWeightMatrix(const WeightMatrix& w) {
  const auto traits = FindTensorTypeTraits(static_cast<uint32_t>(w.type));
  if (!traits || FamilyOf(w.type) == Family::kNone) {
    Fail(ErrorKind::kUnsupported, "MatMul: unsupported weight type " + TypeName(w.type));
  }
  const std::string what = "MatMul: " + TypeName(w.type) + " weight matrix [" +
                           std::to_string(w.rows) + " x " + std::to_string(w.cols) + "]";
  if (w.rows < 0 || w.cols < 0) Fail(ErrorKind::kInvalidArgument, what + " has a negative size");
  if (w.cols % traits->block_size != 0) {
    Fail(ErrorKind::kInvalidArgument,
         what + ": cols is not a multiple of the block size " + std::to_string(traits->block_size));
  }
  if (w.row_bytes < RowBytes(*traits, w.cols)) {
    Fail(ErrorKind::kInvalidArgument, what + ": row_bytes " + std::to_string(w.row_bytes) +
                                          " is less than " +
                                          std::to_string(RowBytes(*traits, w.cols)));
  }
  if (w.rows > 0 && w.cols > 0 && w.data == nullptr) {
    Fail(ErrorKind::kInvalidArgument, what + " has no data");
  }
  const size_t align = RowAlignment(w.type);
  if (reinterpret_cast<uintptr_t>(w.data) % align != 0 || w.row_bytes % align != 0) {
    Fail(ErrorKind::kInvalidArgument,
         what + ": data and row_bytes must be multiples of " + std::to_string(align) + " bytes");
  }
}

namespace {

void ValidateCall(const WeightMatrix& w, const float* x, int64_t T, const float* y, int64_t n_out) {
  ValidateWeightMatrix(w);
  if (T < 0) Fail(ErrorKind::kInvalidArgument, "MatMul: negative batch size T");
  if (T > 0 && w.cols > 0 && x == nullptr) Fail(ErrorKind::kInvalidArgument, "MatMul: x is null");
  if (T > 0 && n_out > 0 && y == nullptr) Fail(ErrorKind::kInvalidArgument, "MatMul: y is null");
}

}  // namespace

void MatMul(const WeightMatrix& w, const float* x, int64_t T, float* y, ThreadPool& pool) {
  const MatMulProduct product{&w, y};
  MatMulEach({&product, 1}, x, T, pool);
}

void MatMulEach(std::span<const MatMulProduct> products, const float* x, int64_t T,
                ThreadPool& pool) {
  if (products.size() > kMaxProducts) {
    Fail(ErrorKind::kInvalidArgument, "MatMulEach: " + std::to_string(products.size()) +
                                          " products, at most " + std::to_string(kMaxProducts));
  }
  for (const MatMulProduct& p : products) {
    if (p.w == nullptr) Fail(ErrorKind::kInvalidArgument, "MatMulEach: a product has no matrix");
    ValidateCall(*p.w, x, T, p.y, p.w->rows);
    if (p.w->cols != products[0].w->cols) {
      Fail(ErrorKind::kInvalidArgument,
           "MatMulEach: matrices of " + std::to_string(products[0].w->cols) + " and " +
               std::to_string(p.w->cols) + " columns cannot share activations");
    }
  }
  if (T == 0 || products.empty()) return;
  if (products[0].w->cols == 0) {
    for (const MatMulProduct& p : products) std::fill(p.y, p.y + T * p.w->rows, 0.0f);
    return;
  }
  RunDenseProducts(products, x, T, pool);
}

void MatMulRows(const WeightMatrix& w, const int32_t* rows, int64_t n_rows, const float* x,
                int64_t T, float* y, ThreadPool& pool) {
  ValidateCall(w, x, T, y, n_rows);
  if (n_rows < 0) Fail(ErrorKind::kInvalidArgument, "MatMulRows: negative row count");
  if (n_rows > 0 && rows == nullptr) {
    Fail(ErrorKind::kInvalidArgument, "MatMulRows: row index list is null");
  }
  for (int64_t i = 0; i < n_rows; ++i) {
    if (rows[i] < 0 || rows[i] >= w.rows) {
      Fail(ErrorKind::kInvalidArgument, "MatMulRows: row index " + std::to_string(rows[i]) +
                                            " at position " + std::to_string(i) +
                                            " is outside [0, " + std::to_string(w.rows) + ")");
    }
  }
  if (T == 0 || n_rows == 0) return;
  if (w.cols == 0) {
    std::fill(y, y + T * n_rows, 0.0f);
    return;
  }
  RunGathered(w, rows, n_rows, x, T, y, pool);
}

}  // namespace tandem::kernels
