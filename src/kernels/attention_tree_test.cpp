// Draft tree rows (docs/mtp.md § Draft trees): a row that reads its path's keys through a remap
// gives the bits of the same row over a cache holding that path in order.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/attention.h"
#include "kernels/attention_test_util.h"
#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"

namespace tandem::kernels {
namespace {

using testing_attention::RandomVector;
using testing_attention::RunAttention;
using testing_attention::TestCache;
using testing_kernels::BitwiseEqual;
using testing_kernels::IsaScope;

// A draft tree's row reads its path's keys through a remap (KvView::remap): its output must be
// bitwise the output of the same row in a cache holding that path linearly, whatever the
// ISA, the type, the threads and where the row's splits and blocks fall.
TEST(AttentionTest, RemappedTreeRowsMatchTheirLinearPath) {
  const int hd = 64, H = 4, Hkv = 1;
  const size_t row = static_cast<size_t>(H) * hd;
  // Tree nodes stored at P + i: node i's parent (-1: the root at P, itself node "root").
  const std::vector<int> parent = {-1, -1, 0, 0, 2, 1, 4};
  for (int32_t P : {int32_t{40}, int32_t{kAttentionKeySplit - 3}}) {
    for (int32_t window : {0, 37}) {
      for (TensorType type : {TensorType::kF16, TensorType::kQ8_0}) {
        const int32_t n_tree = static_cast<int32_t>(parent.size());
        const int32_t n_pos = P + 1 + n_tree;
        std::vector<std::vector<float>> k(n_pos), v(n_pos);
        for (int32_t p = 0; p < n_pos; ++p) {
          k[p] = RandomVector(Hkv * hd, 7000 + 2 * p);
          v[p] = RandomVector(Hkv * hd, 7001 + 2 * p);
        }
        TestCache tree(type, Hkv, hd, n_pos);
        for (int32_t p = 0; p < n_pos; ++p) tree.Put(p, k[p].data(), v[p].data());
        // Node i (at P + 1 + i) and its path from the root: stored positions, root first.
        std::vector<std::vector<int32_t>> paths(n_tree);
        for (int i = 0; i < n_tree; ++i) {
          paths[i] = parent[i] < 0 ? std::vector<int32_t>{P} : paths[parent[i]];
          paths[i].push_back(P + 1 + i);
        }
        const std::vector<float> q = RandomVector(n_tree * row, 77, -2.0f, 2.0f);
        std::vector<int32_t> logical(n_tree);
        std::vector<KeyRemap> remaps(n_tree);
        for (int i = 0; i < n_tree; ++i) {
          logical[i] = P + static_cast<int32_t>(paths[i].size()) - 1;
          remaps[i] = KeyRemap{paths[i].data(), P, static_cast<int32_t>(paths[i].size())};
        }
        for (Isa isa : SupportedIsas()) {
          SCOPED_TRACE(std::string(IsaName(isa)) + " " + std::string(TensorTypeName(type)) +
                       " P=" + std::to_string(P) + " window " + std::to_string(window));
          IsaScope scope(isa);
          for (int threads = 1; threads <= 2; ++threads) {
            ThreadPool pool(threads);
            const std::vector<float> out = RunAttention(
                tree.View({0, n_pos}), H, q, logical, window, &pool, nullptr, 1.0f, remaps.data());
            for (int i = 0; i < n_tree; ++i) {
              // The same row over a cache holding [0, P) and then its path in order.
              TestCache linear(type, Hkv, hd, n_pos);
              for (int32_t p = 0; p < P; ++p) linear.Put(p, k[p].data(), v[p].data());
              for (size_t j = 0; j < paths[i].size(); ++j) {
                linear.Put(P + static_cast<int32_t>(j), k[paths[i][j]].data(),
                           v[paths[i][j]].data());
              }
              const std::vector<float> q_row(q.begin() + i * row, q.begin() + (i + 1) * row);
              const std::vector<float> want =
                  RunAttention(linear.View({0, logical[i] + 1}), H, q_row, {logical[i]}, window);
              const std::vector<float> got(out.begin() + i * row, out.begin() + (i + 1) * row);
              EXPECT_TRUE(BitwiseEqual(got, want)) << "node " << i << ", " << threads << " threads";
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace tandem::kernels
