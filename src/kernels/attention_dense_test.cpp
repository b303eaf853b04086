// AttentionDense: close to a float64 softmax attention, and each row's result bitwise the same
// alone or among other rows, whatever the thread count, on every ISA; its argument checks.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"

namespace tandem::kernels {
namespace {

using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;

std::vector<float> Random(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Case {
  int n_heads, n_kv_heads, head_dim, v_dim, n_keys, n_rows;
};

// Head-major data: q [H][rows][head_dim], Kᵀ [Hkv][head_dim][n_keys + 3], V [Hkv][keys][v_dim]
// (values past head_dim zero, as a padded head), out [H][rows][v_dim].
struct Data {
  Case c;
  std::vector<float> q, kt, v;
  size_t kt_row;
  explicit Data(const Case& cs) : c(cs), kt_row(cs.n_keys + 3) {
    q = Random(static_cast<size_t>(c.n_heads) * c.n_rows * c.head_dim, 1, 2.0f);
    kt = Random(static_cast<size_t>(c.n_kv_heads) * c.head_dim * kt_row, 2);
    v = Random(static_cast<size_t>(c.n_kv_heads) * c.n_keys * c.v_dim, 3);
  }
  // Rows [first, first + n) of every head.
  std::vector<float> Run(int first, int n, ThreadPool* pool) const {
    std::vector<float> out(static_cast<size_t>(c.n_heads) * n * c.v_dim, -7.0f);
    DenseAttentionArgs a;
    a.n_rows = n;
    a.n_heads = c.n_heads;
    a.n_kv_heads = c.n_kv_heads;
    a.n_keys = c.n_keys;
    a.head_dim = c.head_dim;
    a.v_dim = c.v_dim;
    a.q = q.data() + static_cast<size_t>(first) * c.head_dim;
    a.q_head_stride = static_cast<size_t>(c.n_rows) * c.head_dim;
    a.q_row_stride = c.head_dim;
    a.kt = kt.data();
    a.kt_head_stride = static_cast<size_t>(c.head_dim) * kt_row;
    a.kt_row_stride = kt_row;
    a.v = v.data();
    a.v_head_stride = static_cast<size_t>(c.n_keys) * c.v_dim;
    a.v_row_stride = c.v_dim;
    a.out = out.data();
    a.out_head_stride = static_cast<size_t>(n) * c.v_dim;
    a.out_row_stride = c.v_dim;
    a.scale = 0.3f;
    AttentionDense(a, pool);
    return out;
  }
  // Row r of head h in float64.
  std::vector<double> Reference(int h, int r) const {
    const int g = h / (c.n_heads / c.n_kv_heads);
    std::vector<double> s(c.n_keys), out(c.v_dim, 0.0);
    double max = -INFINITY, sum = 0;
    for (int j = 0; j < c.n_keys; ++j) {
      double dot = 0;
      for (int d = 0; d < c.head_dim; ++d) {
        dot += double(q[(static_cast<size_t>(h) * c.n_rows + r) * c.head_dim + d]) *
               kt[(static_cast<size_t>(g) * c.head_dim + d) * kt_row + j];
      }
      s[j] = dot * 0.3;
      max = std::max(max, s[j]);
    }
    for (int j = 0; j < c.n_keys; ++j) sum += (s[j] = std::exp(s[j] - max));
    for (int j = 0; j < c.n_keys; ++j) {
      for (int i = 0; i < c.v_dim; ++i) {
        out[i] += s[j] / sum * v[(static_cast<size_t>(g) * c.n_keys + j) * c.v_dim + i];
      }
    }
    return out;
  }
};

TEST(AttentionDenseTest, CloseToFloat64AndBitwiseAloneOrBatchedOnEveryIsa) {
  const Case cases[] = {
      {2, 2, 64, 64, 70, 37},   // more rows than one task, keys not a multiple of a tile
      {4, 2, 72, 80, 45, 9},    // GQA, a padded 72-wide head
      {3, 1, 20, 32, 300, 13},  // a short head
      {1, 1, 16, 16, 1, 5},     // one key
  };
  ThreadPool one(1), two(2);
  for (Isa isa : SupportedIsas()) {
    IsaScope scope(isa);
    for (const Case& c : cases) {
      const Data data(c);
      const std::vector<float> all = data.Run(0, c.n_rows, &two);
      EXPECT_TRUE(BitwiseEqual(all, data.Run(0, c.n_rows, &one))) << IsaName(isa);
      EXPECT_TRUE(BitwiseEqual(all, data.Run(0, c.n_rows, nullptr))) << IsaName(isa);
      for (int h = 0; h < c.n_heads; ++h) {
        for (int r = 0; r < c.n_rows; ++r) {
          const float* got = all.data() + (static_cast<size_t>(h) * c.n_rows + r) * c.v_dim;
          // Alone, and as the second row of a pair.
          const std::vector<float> alone = data.Run(r, 1, nullptr);
          ASSERT_TRUE(BitwiseEqual(got, alone.data() + h * c.v_dim, c.v_dim))
              << IsaName(isa) << " head " << h << " row " << r;
          if (r > 0) {
            const std::vector<float> pair = data.Run(r - 1, 2, nullptr);
            ASSERT_TRUE(BitwiseEqual(got, pair.data() + (2 * h + 1) * c.v_dim, c.v_dim))
                << IsaName(isa) << " head " << h << " row " << r << " in a pair";
          }
          const std::vector<double> want = data.Reference(h, r);
          for (int i = 0; i < c.v_dim; ++i) {
            ASSERT_NEAR(got[i], want[i], 1e-5) << IsaName(isa) << " head " << h << " row " << r;
          }
        }
      }
    }
  }
}

TEST(AttentionDenseTest, RejectsInconsistentArguments) {
  std::vector<float> buf(64 * 64);
  DenseAttentionArgs good;
  good.n_rows = 2;
  good.n_heads = 1;
  good.n_kv_heads = 1;
  good.n_keys = 4;
  good.head_dim = 16;
  good.v_dim = 16;
  good.q = good.kt = good.v = buf.data();
  good.out = buf.data() + 2048;
  good.q_row_stride = good.v_row_stride = good.out_row_stride = 16;
  good.kt_row_stride = 4;
  AttentionDense(good);
  auto bad = [&](auto change) {
    DenseAttentionArgs a = good;
    change(a);
    EXPECT_THROW(AttentionDense(a), Error);
  };
  bad([](DenseAttentionArgs& a) { a.v_dim = 20; });
  bad([](DenseAttentionArgs& a) { a.n_keys = 0; });
  bad([](DenseAttentionArgs& a) { a.n_heads = 3, a.n_kv_heads = 2; });
  bad([](DenseAttentionArgs& a) { a.kt_row_stride = 3; });
  bad([](DenseAttentionArgs& a) { a.v = nullptr; });
}

}  // namespace
}  // namespace tandem::kernels
