#include "speculative/ngram_drafter.h"

namespace tandem {

NgramDrafter::NgramDrafter(int ngram_min, int ngram_max)
    : ngram_min_(ngram_min), ngram_max_(ngram_max) {
  NgramIndex check(ngram_min, ngram_max);  // validates the lengths now, not at the first draft
}

void NgramDrafter::Draft(const DraftRequest& r, const KvCache&, DraftResult& out) {
  out.Clear();
  auto it = indexes_.find(r.seq);
  if (it == indexes_.end()) it = indexes_.emplace(r.seq, NgramIndex(ngram_min_, ngram_max_)).first;
  NgramIndex& index = it->second;
  index.Sync(r.history);
  out.tokens = index.Propose(r.n_max, &last_match_);
  if (static_cast<int>(out.tokens.size()) < r.n_min) out.tokens.clear();
  // Point masses (see the header); only sampled requests read q.
  if (r.sampler != nullptr) out.q.assign(out.tokens.size(), {});
}

}  // namespace tandem
