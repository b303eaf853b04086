// What every drafter shares: the default batch path, and the choice of a draft token from logits.
#include "speculative/drafter.h"

#include <exception>

#include "base/error.h"
#include "base/stopwatch.h"
#include "sampling/sampler.h"
#include "speculative/draft_constraint.h"

namespace tandem {

void Drafter::DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache) {
  for (DraftJob& job : jobs) {
    const auto t0 = SteadyClock::now();
    job.error.clear();
    try {
      Draft(job.request, target_cache, job.result);
    } catch (const std::exception& e) {
      job.result.Clear();
      job.error = e.what();
    }
    job.ms = MsSince(t0);
  }
}

void DraftAlone(Drafter& drafter, const DraftRequest& request, const KvCache& target_cache,
                DraftResult& result) {
  DraftJob job{request, {}, 0, {}};
  drafter.DraftBatch({&job, 1}, target_cache);
  if (!job.error.empty()) Fail(ErrorKind::kInternal, "drafting failed: " + job.error);
  result = std::move(job.result);
}

bool StopsAtForced(const DraftRequest& request) {
  return request.forced_run_max >= 0 && request.constraint != nullptr &&
         request.constraint->ForcedRun(request.forced_run_max + 1) > request.forced_run_max;
}

bool ChooseDraftToken(const float* logits, int n_vocab, const DraftRequest& request,
                      std::span<const int32_t> history, DraftResult& result, int32_t& token,
                      bool* nothing_allowed) {
  if (nothing_allowed != nullptr) *nothing_allowed = false;
  if (request.constraint != nullptr) {
    if (const int32_t forced = request.constraint->ForcedNext(); forced >= 0) {
      token = forced;
      if (request.sampler != nullptr) result.q.emplace_back();  // a point mass
      result.tokens.push_back(token);
      request.constraint->Advance(token);
      return true;
    }
  }
  std::vector<float> masked;
  if (request.constraint != nullptr) {
    masked.assign(logits, logits + n_vocab);
    // False also when a drafter that scores only some tokens (the centroid head) has none the
    // constraint allows: the draft ends there (the tokens it forces are appended for free).
    if (!request.constraint->MaskLogits(masked.data(), n_vocab)) {
      if (nothing_allowed != nullptr) *nothing_allowed = true;
      return false;
    }
    logits = masked.data();
  }
  if (request.p_min > 0 && TopKProbabilityOfBest(logits, n_vocab) < request.p_min) return false;
  if (request.sampler == nullptr) {
    token = Argmax(std::span<const float>(logits, n_vocab));
  } else {
    std::vector<float> q(n_vocab);
    token = request.sampler->Sample(logits, n_vocab, history, *request.rng, q);
    result.q.push_back(std::move(q));
  }
  result.tokens.push_back(token);
  if (request.constraint != nullptr) request.constraint->Advance(token);
  return true;
}

void ApplyDraftMin(const DraftRequest& request, DraftResult& result) {
  const int n = result.is_tree() ? result.trunk : static_cast<int>(result.tokens.size());
  if (n < request.n_min) {
    const int steps = result.steps;  // still spent
    result.Clear();
    result.steps = steps;
  }
}

float TopKProbabilityOfBest(const float* logits, int n_vocab, int k) {
  const std::vector<TreeCandidate> best = TopCandidates(logits, n_vocab, 1, k);
  return best.empty() ? 0.0f : best[0].p;
}

}  // namespace tandem
