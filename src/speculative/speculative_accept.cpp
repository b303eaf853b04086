// The accept / resample rule of speculative sampling, shared by the speculative engine.
#include "speculative/speculative_accept.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "sampling/sampler.h"
#include "sampling/vocab_scan.h"

namespace tandem {
namespace {

void CheckSizes(size_t p, size_t q, size_t residual) {
  if (p == 0 || p != q || p != residual) {
    Fail(ErrorKind::kInvalidArgument, "speculative accept: sizes differ or are zero (p " +
                                          std::to_string(p) + ", q " + std::to_string(q) +
                                          ", residual " + std::to_string(residual) + ")");
  }
}

// residual /= its sum (summed in id order), or residual = p when that sum is zero.
void NormaliseOrFallBack(std::span<const float> p, std::span<float> residual) {
  const double total = sampling::SumInOrder(residual);
  if (!(total > 0.0)) {
    std::copy(p.begin(), p.end(), residual.begin());
    return;
  }
  // (A block of zeros divides to itself: skipped.)
  for (size_t i = 0; i < residual.size(); i += sampling::kScanBlock) {
    if (sampling::ZeroBlockAt(residual, i)) continue;
    const size_t end = std::min(i + sampling::kScanBlock, residual.size());
    for (size_t j = i; j < end; ++j) residual[j] = static_cast<float>(residual[j] / total);
  }
}

}  // namespace

void ResidualDistribution(std::span<const float> p, std::span<const float> q,
                          std::span<float> residual) {
  CheckSizes(p.size(), q.size(), residual.size());
  for (size_t i = 0; i < p.size(); ++i) residual[i] = std::max(0.0f, p[i] - q[i]);
  NormaliseOrFallBack(p, residual);
}

SpeculativeOutcome SpeculativeAccept(std::span<const float> p, std::span<const float> q,
                                     int32_t draft_token, Rng& rng, std::span<float> residual) {
  const bool point_mass = q.empty();
  CheckSizes(p.size(), point_mass ? p.size() : q.size(), residual.size());
  if (draft_token < 0 || static_cast<size_t>(draft_token) >= p.size()) {
    Fail(ErrorKind::kInvalidArgument, "speculative accept: draft token " +
                                          std::to_string(draft_token) + " is outside [0, " +
                                          std::to_string(p.size()) + ")");
  }
  const double px = p[draft_token];
  if (point_mass) {
    // q = one-hot at x: accepted with probability p(x); the residual max(0, p - q) is p without
    // x. The same draws and results as passing that one-hot q.
    if (rng.Uniform() < px) return {.accepted = true, .token = draft_token};
    std::copy(p.begin(), p.end(), residual.begin());
    residual[draft_token] = 0.0f;
    NormaliseOrFallBack(p, residual);
    return {.accepted = false, .token = SampleFrom(residual, rng)};
  }
  const double qx = q[draft_token];
  // u < p/q without dividing: accepted with probability min(1, p(x)/q(x)).
  if (rng.Uniform() * qx < px) return {.accepted = true, .token = draft_token};
  ResidualDistribution(p, q, residual);
  return {.accepted = false, .token = SampleFrom(residual, rng)};
}

}  // namespace tandem
