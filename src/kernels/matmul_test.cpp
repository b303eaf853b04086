// MatMul tests: every weight type on every ISA path the machine supports, against the scalar
// path and a double-precision oracle; bitwise batch/thread invariance; row gather; bad input.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/cpu_features.h"
#include "base/error.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"
#include "kernels/matmul_kernel.h"
#include "kernels/matmul_repack.h"
#include "tensor/blocks.h"
#include "tensor/dequantize.h"
#include "tensor/float16.h"
#include "tensor/quantize.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;
using testing_kernels::Nmse;
using testing_kernels::RandomActivations;

using T = TensorType;

const std::vector<TensorType>& AllTypes() {
  static const std::vector<TensorType> types = {
      T::kF32,  T::kF16,  T::kBF16, T::kQ8_0, T::kQ4_0, T::kQ4_1,   T::kQ5_0,   T::kQ5_1,
      T::kQ4_K, T::kQ5_K, T::kQ6_K, T::kQ2_K, T::kQ3_K, T::kIQ4_NL, T::kIQ4_XS, T::kMXFP4};
  return types;
}

bool IsFloat(TensorType t) {
  return t == T::kF32 || t == T::kF16 || t == T::kBF16;
}

// Every other type meets quantized activations (Q8_0 / Q8_1 / Q8_K): results are exact per block
// and bitwise equal across ISA paths.
bool IsIntegerDot(TensorType t) {
  return !IsFloat(t);
}

// The activation format the integer kernels quantize to for weight type t.
TensorType ActivationType(TensorType t) {
  switch (t) {
    case T::kQ4_1:
    case T::kQ5_1:
      return T::kQ8_1;
    case T::kQ2_K:
    case T::kQ3_K:
    case T::kQ4_K:
    case T::kQ5_K:
    case T::kQ6_K:
    case T::kIQ4_XS:
      return T::kQ8_K;
    default:
      return T::kQ8_0;
  }
}

std::string Name(TensorType t) {
  return std::string(TensorTypeName(t));
}

uint32_t BlockSize(TensorType t) {
  return GetTensorTypeTraits(t).block_size;
}

// Offsets of the fp16 scale fields of each block type (so random blocks stay finite).
std::vector<size_t> Fp16Fields(TensorType t) {
  switch (t) {
    case T::kQ4_0:
    case T::kQ5_0:
    case T::kQ8_0:
    case T::kIQ4_NL:
    case T::kIQ4_XS:
      return {0};
    case T::kQ4_1:
    case T::kQ5_1:
    case T::kQ4_K:
    case T::kQ5_K:
      return {0, 2};
    case T::kQ2_K:
      return {80, 82};
    case T::kQ3_K:
      return {108};
    case T::kQ6_K:
      return {208};
    default:
      return {};
  }
}

// A random weight matrix [rows][cols] of `type`, dense. Float types hold random values; quantized
// types hold random bytes (covering every code) with scale fields set to sane random values.
std::vector<uint8_t> RandomWeights(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(type), cols);
  std::vector<uint8_t> data(rows * row_bytes);
  if (IsFloat(type)) {
    std::vector<float> row(cols);
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& v : row) v = uni(rng);
      QuantizeRow(type, row.data(), data.data() + r * row_bytes, cols);
    }
    return data;
  }
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  const auto& traits = GetTensorTypeTraits(type);
  const size_t n_blocks = data.size() / traits.block_bytes;
  std::uniform_real_distribution<float> scale(0.002f, 0.05f);
  for (size_t b = 0; b < n_blocks; ++b) {
    uint8_t* block = data.data() + b * traits.block_bytes;
    for (size_t off : Fp16Fields(type)) {
      const uint16_t h = Fp32ToFp16((rng() & 1 ? 1.0f : -1.0f) * scale(rng));
      std::memcpy(block + off, &h, sizeof h);
    }
    if (type == T::kMXFP4) block[0] = static_cast<uint8_t>(118 + rng() % 8);
  }
  return data;
}

std::vector<double> ToDouble(const std::vector<float>& v) {
  return {v.begin(), v.end()};
}

// Plain double-precision dequantize-then-dot: y[t][r] = sum_i W[r][i] * a[t][i].
std::vector<double> Oracle(TensorType type, const std::vector<uint8_t>& w, int64_t rows,
                           int64_t cols, const std::vector<float>& a, int64_t n_t) {
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(type), cols);
  std::vector<float> wf(cols);
  std::vector<double> y(n_t * rows);
  for (int64_t r = 0; r < rows; ++r) {
    DequantizeRow(type, w.data() + r * row_bytes, wf.data(), cols);
    for (int64_t t = 0; t < n_t; ++t) {
      double acc = 0;
      for (int64_t i = 0; i < cols; ++i) acc += double(wf[i]) * double(a[t * cols + i]);
      y[t * rows + r] = acc;
    }
  }
  return y;
}

// The activations as the integer kernels see them: quantized to the weight's activation type,
// then dequantized.
std::vector<float> QuantizedActivationValues(TensorType type, const std::vector<float>& x,
                                             int64_t n_t, int64_t cols) {
  std::vector<float> out(x.size());
  for (int64_t t = 0; t < n_t; ++t) {
    const float* src = x.data() + t * cols;
    float* dst = out.data() + t * cols;
    if (ActivationType(type) == T::kQ8_1) {
      std::vector<BlockQ8_1> q(cols / 32);
      QuantizeRowQ8_1(src, q.data(), cols);
      DequantizeRowQ8_1(q.data(), dst, cols);
    } else if (ActivationType(type) == T::kQ8_K) {
      std::vector<BlockQ8_K> q(cols / 256);
      QuantizeRowQ8_K(src, q.data(), cols);
      DequantizeRowQ8_K(q.data(), dst, cols);
    } else {
      std::vector<BlockQ8_0> q(cols / 32);
      QuantizeRowQ8_0(src, q.data(), cols);
      DequantizeRowQ8_0(q.data(), dst, cols);
    }
  }
  return out;
}

// MatMul of x by w; with `packed`, on an interleaved copy where the type has a packed layout
// (whether or not the active path reads it).
std::vector<float> RunMatMul(TensorType type, const std::vector<uint8_t>& w, int64_t rows,
                             int64_t cols, const float* x, int64_t n_t, ThreadPool& pool,
                             bool packed = false) {
  std::vector<float> y(n_t * rows, -1.0f);
  WeightMatrix m = DenseWeightMatrix(type, w.data(), rows, cols);
  PackedMatrix copy;
  if (packed && HasPackedLayout(type)) {
    copy = PackWeightMatrix(m);
    m = copy.Attach(m);
  }
  MatMul(m, x, n_t, y.data(), pool);
  return y;
}

// Activations with rounding ties, sign ties for the Q8_K maximum, zero and tiny blocks, and
// random values.
std::vector<float> TrickyActivations(int64_t cols) {
  std::vector<float> x = RandomActivations(cols, 14);
  for (int i = 0; i < 32; ++i) x[i] = i == 0 ? 127.0f : (i % 2 ? 1.0f : -1.0f) * (i + 0.5f);
  // Scale 1 in this block: the floats just below one half as they are, and ties near them.
  for (int i : {2, 3, 4}) x[i] = (i % 2 ? 1.0f : -1.0f) * std::nextafter(0.5f, 0.0f);
  x[5] = 0.5f;
  x[6] = -std::nextafter(1.5f, 0.0f);
  for (int i = 32; i < 64; ++i) x[i] = 0.0f;
  for (int i = 64; i < 96; ++i) x[i] = 1e-30f * static_cast<float>(i - 80);
  for (int i = 256; i < 512; ++i) x[i] = (i % 3 ? 1.0f : -1.0f) * ((i % 50) + 0.5f);
  x[259] = -127.0f;  // the first of the two largest magnitudes sets the Q8_K sign
  x[263] = 127.0f;
  return x;
}

// Every ISA's activation quantizers are bit-exact with the reference ones.
// A weight type needs only its codec and its line in the type table to be multiplied: the scalar
// path has a tile for every quantized type the table can decode (the vector paths fall back to
// it for types they do not list).
TEST(MatMulTest, EveryDecodableQuantizedTypeHasAScalarTile) {
  const MatMulKernelTable& scalar = ref::MatMulKernels();
  int quantized = 0;
  for (uint32_t id = 0; id < kTensorTypeIdLimit; ++id) {
    const auto traits = FindTensorTypeTraits(id);
    if (!traits || !traits->dequantizable || traits->block_size == 1) continue;  // floats: 1
    ++quantized;
    EXPECT_NE(scalar.quant_tile[id], nullptr) << traits->name;
  }
  EXPECT_EQ(quantized, 13);  // Q4_0 .. Q6_K, IQ4_NL, IQ4_XS, MXFP4
}

TEST(MatMulTest, ActivationQuantizersMatchReference) {
  const int64_t cols = 768;
  const auto x = TrickyActivations(cols);
  struct Buffers {
    std::vector<int8_t> qs = std::vector<int8_t>(768);
    std::vector<float> d = std::vector<float>(24), s = std::vector<float>(24);
    std::vector<int32_t> sum16 = std::vector<int32_t>(48), sum32 = std::vector<int32_t>(24);
    QuantizedRow Row() { return {qs.data(), d.data(), s.data(), sum16.data(), sum32.data()}; }
  };
  auto run = [&](QuantizeRowFn fn) {
    Buffers b;
    fn(x.data(), cols, b.Row());
    return b;
  };
  const MatMulKernelTable& want = ref::MatMulKernels();
  for (Isa isa : SupportedIsas()) {
    const MatMulKernelTable& got = isa == Isa::kAvx2     ? avx2::MatMulKernels()
                                   : isa == Isa::kAvx512 ? avx512::MatMulKernels()
                                                         : ref::MatMulKernels();
    const std::pair<QuantizeRowFn, QuantizeRowFn> pairs[] = {
        {got.quantize_q8_0, want.quantize_q8_0},
        {got.quantize_q8_1, want.quantize_q8_1},
        {got.quantize_q8_k, want.quantize_q8_k}};
    for (int f = 0; f < 3; ++f) {
      SCOPED_TRACE(std::string(IsaName(isa)) + " family " + std::to_string(f));
      Buffers a = run(pairs[f].first), b = run(pairs[f].second);
      EXPECT_EQ(a.qs, b.qs);
      EXPECT_EQ(a.sum16, b.sum16);
      EXPECT_EQ(a.sum32, b.sum32);
      const size_t n_d = f == 2 ? 3 : 24;
      EXPECT_TRUE(BitwiseEqual(a.d.data(), b.d.data(), n_d));
      if (f == 1) {
        EXPECT_TRUE(BitwiseEqual(a.s.data(), b.s.data(), n_d));
      }
    }
  }
}

// The scalar path against double-precision oracles. With the activations the kernels actually
// see, the only error left is f32 rounding; with the original f32 activations the error is the
// activation quantization noise.
TEST(MatMulTest, ScalarMatchesDoubleOracle) {
  IsaScope guard;
  SetActiveIsa(Isa::kScalar);
  ThreadPool pool(1);
  const int64_t rows = 19, cols = 512, n_t = 3;
  for (TensorType type : AllTypes()) {
    SCOPED_TRACE(Name(type));
    const auto w = RandomWeights(type, rows, cols, 1);
    const auto x = RandomActivations(n_t * cols, 2);
    const auto y = RunMatMul(type, w, rows, cols, x.data(), n_t, pool);
    if (IsIntegerDot(type)) {
      const auto xq = QuantizedActivationValues(type, x, n_t, cols);
      // Q8_1 carries d·Σq as fp16 (s), so Q4_1/Q5_1 keep that rounding (~1e-3 of the m·s term).
      const bool fp16_sum = ActivationType(type) == T::kQ8_1;
      EXPECT_LT(Nmse(y, Oracle(type, w, rows, cols, xq, n_t)), fp16_sum ? 1e-7 : 1e-10);
      EXPECT_LT(Nmse(y, Oracle(type, w, rows, cols, x, n_t)), 1e-3);
    } else {
      EXPECT_LT(Nmse(y, Oracle(type, w, rows, cols, x, n_t)), 1e-10);
    }
  }
}

// A quantized weight matrix from real values, so the 1e-3 bound above also holds for the
// quantizers' output (not only for random codes).
TEST(MatMulTest, ScalarMatchesOracleOnQuantizedRealWeights) {
  IsaScope guard;
  SetActiveIsa(Isa::kScalar);
  ThreadPool pool(1);
  const int64_t rows = 8, cols = 768, n_t = 2;
  for (TensorType type : AllTypes()) {
    if (!CanQuantize(type)) continue;
    SCOPED_TRACE(Name(type));
    const auto wf = RandomActivations(rows * cols, 3);
    const size_t row_bytes = RowBytes(GetTensorTypeTraits(type), cols);
    std::vector<uint8_t> w(rows * row_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      QuantizeRow(type, wf.data() + r * cols, w.data() + r * row_bytes, cols);
    }
    const auto x = RandomActivations(n_t * cols, 4);
    const auto y = RunMatMul(type, w, rows, cols, x.data(), n_t, pool);
    EXPECT_LT(Nmse(y, Oracle(type, w, rows, cols, x, n_t)), IsFloat(type) ? 1e-10 : 1e-3);
  }
}

// Every ISA path against the scalar path on odd shapes: bitwise for the integer-dot types,
// within f32 reordering noise for the others.
TEST(MatMulTest, EveryIsaMatchesScalar) {
  IsaScope guard;
  ThreadPool pool(2);
  struct Shape {
    int64_t rows, blocks, n_t;
  };
  const Shape shapes[] = {{1, 1, 1}, {15, 2, 3}, {16, 3, 5}, {17, 1, 9}, {37, 2, 2}};
  for (TensorType type : AllTypes()) {
    for (const Shape& s : shapes) {
      const int64_t cols = s.blocks * (BlockSize(type) == 1 ? 23 : BlockSize(type));
      SCOPED_TRACE(Name(type) + " rows " + std::to_string(s.rows) + " cols " +
                   std::to_string(cols) + " T " + std::to_string(s.n_t));
      const auto w = RandomWeights(type, s.rows, cols, 5);
      const auto x = RandomActivations(s.n_t * cols, 6);
      SetActiveIsa(Isa::kScalar);
      const auto want = RunMatMul(type, w, s.rows, cols, x.data(), s.n_t, pool);
      for (Isa isa : SupportedIsas()) {
        SCOPED_TRACE(std::string(IsaName(isa)));
        SetActiveIsa(isa);
        const auto got = RunMatMul(type, w, s.rows, cols, x.data(), s.n_t, pool);
        if (IsIntegerDot(type)) {
          EXPECT_TRUE(BitwiseEqual(got.data(), want.data(), got.size()));
        } else {
          EXPECT_LT(Nmse(got, ToDouble(want)), 1e-10);
        }
      }
    }
  }
}

// Batch invariance: every output row is bitwise the same whatever T (1..64), the row's position
// in the batch and the thread count (1..4), on every ISA path and weight type.
TEST(MatMulTest, BitwiseInvariantOverBatchPositionAndThreads) {
  IsaScope guard;
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (int n = 1; n <= 4; ++n) pools.push_back(std::make_unique<ThreadPool>(n));
  const int64_t rows = 37, max_t = 64;
  for (Isa isa : SupportedIsas()) {
    SetActiveIsa(isa);
    for (TensorType type : AllTypes()) {
      SCOPED_TRACE(std::string(IsaName(isa)) + " " + Name(type));
      const int64_t cols = BlockSize(type) == 1 ? 72 : 256;
      const auto w = RandomWeights(type, rows, cols, 7);
      const auto x = RandomActivations(max_t * cols, 8);
      const auto full = RunMatMul(type, w, rows, cols, x.data(), max_t, *pools[0]);
      int failures = 0;
      for (int64_t n_t = 1; n_t <= max_t && failures < 3; ++n_t) {
        const int64_t offset = (n_t * 7) % (max_t - n_t + 1);
        for (auto& pool : pools) {
          for (bool packed : {false, true}) {
            const auto y =
                RunMatMul(type, w, rows, cols, x.data() + offset * cols, n_t, *pool, packed);
            if (!BitwiseEqual(y.data(), full.data() + offset * rows, y.size())) {
              ADD_FAILURE() << "T " << n_t << " offset " << offset << " threads " << pool->size()
                            << (packed ? " packed" : "");
              ++failures;
            }
          }
        }
      }
    }
  }
}

// Packed (interleaved) weights give bitwise the row-major results on every path, for row counts
// that are not multiples of the group, every activation-chunk tail and tiles of several groups
// (the AVX2 kernels take activation rows 8 (Q4_0, Q8_0) or 6 (Q4_K, Q6_K) at a time over groups
// of 8 rows, the AVX-512 ones 16 or 8 over groups of 16, and Q4_0/Q8_0 batches of 2-4 rows, or
// above 16 rows 4 at a time, over pairs of groups: T = 6..9, 12, 13, 16, 17, 18, 21, 31, 33, 47 are
// full chunks and tails; 1, 7, 9, 17, 37, 100 rows fill part of a last group, 40 and 100 leave a
// group out of the pairs, 300 splits into tiles; 80-block rows are long enough that one row (T =
// 1) reads two groups at once too, 33 rows leave a group out). Each path packs in its own group
// size; a copy in another size is read row-major. The AVX-512 path runs with and without GFNI.
TEST(MatMulTest, PackedLayoutMatchesRowMajorOnEveryIsa) {
  IsaScope guard;
  ThreadPool pool(3);
  struct Shape {
    int64_t rows, blocks, n_t;
  };
  const Shape shapes[] = {{1, 1, 1},    {7, 2, 3},   {8, 3, 4},    {9, 1, 5},    {37, 2, 2},
                          {300, 40, 6}, {61, 8, 13}, {2100, 2, 7}, {24, 3, 8},   {17, 2, 9},
                          {40, 5, 16},  {9, 4, 17},  {10, 3, 12},  {15, 2, 13},  {40, 2, 33},
                          {16, 3, 31},  {24, 1, 47}, {100, 3, 21}, {300, 4, 18}, {50, 3, 3},
                          {33, 2, 4},   {50, 80, 1}, {33, 80, 1},  {33, 80, 2}};
  for (TensorType type : {T::kQ4_0, T::kQ8_0, T::kQ4_K, T::kQ6_K}) {
    ASSERT_TRUE(HasPackedLayout(type));
    for (const Shape& s : shapes) {
      const int64_t cols = BlockSize(type) * s.blocks;
      SCOPED_TRACE(Name(type) + " rows " + std::to_string(s.rows) + " cols " +
                   std::to_string(cols) + " T " + std::to_string(s.n_t));
      const auto w = RandomWeights(type, s.rows, cols, 11);
      auto x = RandomActivations(s.n_t * cols, 12);
      x[0] = 127.0f;  // an activation block at full scale: codes +-127
      SetActiveIsa(Isa::kScalar);
      const auto want = RunMatMul(type, w, s.rows, cols, x.data(), s.n_t, pool);
      for (Isa isa : SupportedIsas()) {
        SetActiveIsa(isa);
        // On AVX-512, with GFNI's nibble unpacking (where the host has it) and without.
        for (bool gfni : {true, false}) {
          if (!gfni && (isa != Isa::kAvx512 || !GfniActive())) continue;
          SetGfniAllowed(gfni);
          SCOPED_TRACE(ActivePathName());
          const auto got = RunMatMul(type, w, s.rows, cols, x.data(), s.n_t, pool, true);
          EXPECT_TRUE(BitwiseEqual(got, want));
          SetGfniAllowed(true);
        }
      }
    }
  }
  EXPECT_FALSE(HasPackedLayout(T::kQ5_K));
  const auto w = RandomWeights(T::kQ5_K, 8, 256, 1);
  EXPECT_THROW(PackWeightMatrix(DenseWeightMatrix(T::kQ5_K, w.data(), 8, 256)), Error);
}

// A copy packed by one path (16-row groups on AVX-512, 8 on AVX2) and read while another is
// active gives the same bits: MatMul reads the row-major data instead.
TEST(MatMulTest, PackedCopyOfAnotherPathGivesTheSameBits) {
  IsaScope guard;
  ThreadPool pool(2);
  const int64_t rows = 40, cols = 512, n_t = 3;
  const auto w = RandomWeights(T::kQ4_K, rows, cols, 5);
  const auto x = RandomActivations(n_t * cols, 6);
  SetActiveIsa(Isa::kScalar);
  const auto want = RunMatMul(T::kQ4_K, w, rows, cols, x.data(), n_t, pool);
  for (Isa pack_isa : SupportedIsas()) {
    SetActiveIsa(pack_isa);
    const int group_rows = PackedGroupRows();
    EXPECT_EQ(group_rows, pack_isa == Isa::kAvx512 && HostCpuFeatures().avx512vnni ? 16 : 8);
    const PackedMatrix copy = PackWeightMatrix(DenseWeightMatrix(T::kQ4_K, w.data(), rows, cols));
    EXPECT_EQ(copy.group_rows(), group_rows);
    const WeightMatrix m = copy.Attach(DenseWeightMatrix(T::kQ4_K, w.data(), rows, cols));
    for (Isa isa : SupportedIsas()) {
      SCOPED_TRACE(std::string(IsaName(pack_isa)) + " copy on " + std::string(IsaName(isa)));
      SetActiveIsa(isa);
      std::vector<float> got(n_t * rows);
      MatMul(m, x.data(), n_t, got.data(), pool);
      EXPECT_TRUE(BitwiseEqual(got, want));
    }
  }
}

// Row gather gives bitwise the rows of the full product, in any order, with repeats.
TEST(MatMulTest, RowGatherEqualsFullMatMulRows) {
  IsaScope guard;
  ThreadPool pool(3);
  const int64_t rows = 45;
  std::mt19937 rng(9);
  for (Isa isa : SupportedIsas()) {
    SetActiveIsa(isa);
    for (TensorType type : AllTypes()) {
      SCOPED_TRACE(std::string(IsaName(isa)) + " " + Name(type));
      const int64_t cols = BlockSize(type) == 1 ? 40 : 256;
      const auto w = RandomWeights(type, rows, cols, 10);
      const WeightMatrix wm = DenseWeightMatrix(type, w.data(), rows, cols);
      for (int64_t n_t : {1, 3, 8}) {
        const auto x = RandomActivations(n_t * cols, 11);
        const auto full = RunMatMul(type, w, rows, cols, x.data(), n_t, pool);
        for (int64_t n_rows : {1, 5, 17, 40}) {
          std::vector<int32_t> index(n_rows);
          for (auto& i : index) i = static_cast<int32_t>(rng() % rows);
          std::vector<float> y(n_t * n_rows);
          MatMulRows(wm, index.data(), n_rows, x.data(), n_t, y.data(), pool);
          for (int64_t t = 0; t < n_t; ++t) {
            for (int64_t i = 0; i < n_rows; ++i) {
              ASSERT_TRUE(BitwiseEqual(&y[t * n_rows + i], &full[t * rows + index[i]], 1))
                  << "T " << n_t << " t " << t << " i " << i << " row " << index[i];
            }
          }
        }
      }
    }
  }
}

TEST(MatMulTest, PaddedRowsAndEmptyShapes) {
  IsaScope guard;
  ThreadPool pool(2);
  const int64_t rows = 9, cols = 64;
  const auto dense = RandomWeights(T::kQ4_0, rows, cols, 12);
  const size_t row_bytes = RowBytes(GetTensorTypeTraits(T::kQ4_0), cols);
  std::vector<uint8_t> padded(rows * (row_bytes + 6));
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(padded.data() + r * (row_bytes + 6), dense.data() + r * row_bytes, row_bytes);
  }
  const auto x = RandomActivations(2 * cols, 13);
  const auto want = RunMatMul(T::kQ4_0, dense, rows, cols, x.data(), 2, pool);
  WeightMatrix w = DenseWeightMatrix(T::kQ4_0, padded.data(), rows, cols);
  w.row_bytes = row_bytes + 6;
  std::vector<float> y(2 * rows);
  MatMul(w, x.data(), 2, y.data(), pool);
  EXPECT_TRUE(BitwiseEqual(y.data(), want.data(), y.size()));

  MatMul(w, x.data(), 0, nullptr, pool);  // T = 0: nothing to do
  const WeightMatrix no_cols = DenseWeightMatrix(T::kQ4_0, padded.data(), rows, 0);
  std::vector<float> zeros(rows, 5.0f);
  MatMul(no_cols, x.data(), 1, zeros.data(), pool);
  for (float v : zeros) EXPECT_EQ(v, 0.0f);
}

ErrorKind KindOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::kInternal;  // did not throw
}

TEST(MatMulTest, RejectsBadInput) {
  ThreadPool pool(1);
  std::vector<uint8_t> data(4096);
  std::vector<float> x(256), y(256);
  auto matmul = [&](const WeightMatrix& w) {
    return [&pool, &x, &y, w] { MatMul(w, x.data(), 1, y.data(), pool); };
  };
  EXPECT_EQ(KindOf(matmul(DenseWeightMatrix(T::kQ8_K, data.data(), 1, 256))),
            ErrorKind::kUnsupported);
  EXPECT_EQ(KindOf(matmul(DenseWeightMatrix(T::kIQ2_XXS, data.data(), 1, 256))),
            ErrorKind::kUnsupported);
  EXPECT_EQ(KindOf(matmul(DenseWeightMatrix(static_cast<TensorType>(4), data.data(), 1, 32))),
            ErrorKind::kUnsupported);
  EXPECT_EQ(KindOf(matmul(DenseWeightMatrix(T::kQ4_0, data.data(), 1, 48))),
            ErrorKind::kInvalidArgument);  // cols not a multiple of 32
  WeightMatrix short_rows = DenseWeightMatrix(T::kQ4_K, data.data(), 2, 256);
  short_rows.row_bytes = 100;
  EXPECT_EQ(KindOf(matmul(short_rows)), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(matmul(DenseWeightMatrix(T::kF32, nullptr, 2, 8))), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf(matmul(DenseWeightMatrix(T::kF32, data.data() + 1, 2, 8))),
            ErrorKind::kInvalidArgument);  // misaligned
  EXPECT_EQ(KindOf(matmul(DenseWeightMatrix(T::kF32, data.data(), -1, 8))),
            ErrorKind::kInvalidArgument);
  const WeightMatrix ok = DenseWeightMatrix(T::kF32, data.data(), 4, 8);
  EXPECT_EQ(KindOf([&] { MatMul(ok, x.data(), -1, y.data(), pool); }), ErrorKind::kInvalidArgument);
  EXPECT_EQ(KindOf([&] { MatMul(ok, nullptr, 1, y.data(), pool); }), ErrorKind::kInvalidArgument);
  const int32_t bad_index[] = {0, 4};
  EXPECT_EQ(KindOf([&] { MatMulRows(ok, bad_index, 2, x.data(), 1, y.data(), pool); }),
            ErrorKind::kInvalidArgument);
  const int32_t negative_index[] = {-1};
  EXPECT_EQ(KindOf([&] { MatMulRows(ok, negative_index, 1, x.data(), 1, y.data(), pool); }),
            ErrorKind::kInvalidArgument);
  EXPECT_TRUE(MatMulSupportsType(T::kQ6_K));
  EXPECT_FALSE(MatMulSupportsType(T::kQ8_1));
}

}  // namespace
}  // namespace tandem::kernels
