#include "cli/verify_roofline.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "kernels/matmul_rate.h"

namespace tandem::cli {
namespace {

// The kernel a matrix gets depends on its type, its layout and its row length; matrices that
// share them share a rate.
using KernelKey = std::tuple<TensorType, int64_t, bool>;

struct KernelWork {
  kernels::WeightMatrix largest;  // the one timed
  double macs_per_row = 0;        // of all matrices with this key
};

}  // namespace

nlohmann::json VerifyRoofline(const Gemma4Model& target, double bandwidth,
                              const std::vector<double>& verify_ms, ThreadPool& pool) {
  std::map<KernelKey, KernelWork> work;
  double macs_per_row = 0;
  for (const MatrixUse& use : target.weights().MatricesPerRow(target.config())) {
    const kernels::WeightMatrix& m = use.matrix;
    KernelWork& w = work[{m.type, m.cols, m.packed != nullptr}];
    if (m.rows > w.largest.rows) w.largest = m;
    const double macs = static_cast<double>(m.rows) * static_cast<double>(m.cols) * use.per_row;
    w.macs_per_row += macs;
    macs_per_row += macs;
  }
  std::vector<double> compute_ms, floor;
  const double read_ms = 1e3 * target.BytesPerToken() / bandwidth;
  for (size_t T = 1; T <= verify_ms.size(); ++T) {
    double ms = 0;
    for (const auto& [key, w] : work) {
      const double rate = kernels::MatMulComputeRate(w.largest, static_cast<int64_t>(T), pool);
      ms += 1e3 * w.macs_per_row * static_cast<double>(T) / rate;
    }
    compute_ms.push_back(ms);
    floor.push_back(std::max(ms, read_ms) / verify_ms[0]);
  }
  return {{"macs_per_row", macs_per_row},
          {"weights_read_ms", read_ms},
          {"compute_ms_by_rows", compute_ms},
          {"floor_vs_t1", floor}};
}

}  // namespace tandem::cli
