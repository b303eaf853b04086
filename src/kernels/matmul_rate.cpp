#include "kernels/matmul_rate.h"

#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"

namespace tandem::kernels {

double MatMulComputeRate(const WeightMatrix& w, int64_t T, ThreadPool& pool, size_t slice_bytes) {
  ValidateWeightMatrix(w);
  if (T < 1) {
    Fail(ErrorKind::kInvalidArgument,
         "MatMulComputeRate: T must be at least 1, got " + std::to_string(T));
  }
  if (slice_bytes == 0) {
    const long cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
    slice_bytes = cache > 0 ? std::min<size_t>(static_cast<size_t>(cache) / 2, size_t{8} << 20)
                            : size_t{4} << 20;
  }
  const int64_t fit = static_cast<int64_t>(slice_bytes / std::max<size_t>(w.row_bytes, 1));
  const WeightMatrix slice = FirstRows(w, std::min(w.rows, std::max<int64_t>(64, fit / 64 * 64)));
  std::vector<float> x(static_cast<size_t>(T * w.cols)), y(static_cast<size_t>(T * slice.rows));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));

  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < 2; ++i) MatMul(slice, x.data(), T, y.data(), pool);  // into the cache
  double best = std::numeric_limits<double>::infinity();
  for (int round = 0; round < 5; ++round) {
    // Calls until a millisecond has passed: one call of a small slice is near the clock's
    // resolution and the pool's hand-off.
    int calls = 0;
    const auto start = Clock::now();
    double seconds = 0;
    do {
      MatMul(slice, x.data(), T, y.data(), pool);
      ++calls;
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
    } while (seconds < 1e-3);
    best = std::min(best, seconds / calls);
  }
  return static_cast<double>(slice.rows) * static_cast<double>(w.cols) * static_cast<double>(T) /
         best;
}

}  // namespace tandem::kernels
