// The floor under `tandem bench --spec`'s verification cost curve, measured in the same run: a
// forward of T rows takes at least the time to read its weights at the measured read bandwidth,
// and at least the time its matmuls' multiply-adds take at the kernels' own rate with the weights
// in cache (kernels/matmul_rate.h, per weight type and shape). Where the second passes the first,
// verifying more rows is bound by compute, not by memory, on this machine with these kernels.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "base/thread_pool.h"
#include "model/gemma4/target.h"

namespace tandem::cli {

// verify_ms[T - 1]: the measured forward of T rows (all wanting logits). Returns
// {macs_per_row, weights_read_ms, compute_ms_by_rows, floor_vs_t1}: for T = 1..verify_ms.size(),
// the matmuls' compute time and max(weights_read_ms, compute) / verify_ms[0].
nlohmann::json VerifyRoofline(const Gemma4Model& target, double bandwidth,
                              const std::vector<double>& verify_ms, ThreadPool& pool);

}  // namespace tandem::cli
