// Batched MTP drafting for the engine: draft step i runs ONE assistant Step holding a row for
// every slot still drafting, so slots drafting together pay for their longest draft, not the sum.
// Each slot gets exactly the drafts MtpDrafter would propose for it alone (rows are independent).
#pragma once

#include <string>
#include <vector>

#include "model/gemma4_assistant.h"
#include "speculative/drafter.h"

namespace tandem {

struct DraftJob {
  DraftRequest request;  // as for Drafter::Draft; pointers must stay valid during DraftBatch
  DraftResult result;
  double ms = 0;      // wall time of the assistant steps this job took part in
  std::string error;  // non-empty: drafting failed for this job (result is then empty)
};

// Drafts every job: up to request.n_max steps each, a job leaving early when its draft's top-10
// probability falls below p_min; then drafts shorter than n_min are dropped, as MtpDrafter does.
// A failure confined to one job (its sampler, or its row of the step) is reported in its
// `error`; the other jobs are unaffected.
void DraftBatch(const Gemma4Assistant& assistant, const KvCache& target_cache,
                std::vector<DraftJob>& jobs, ThreadPool& pool);

}  // namespace tandem
