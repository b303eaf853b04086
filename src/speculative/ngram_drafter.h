// Drafting by prompt lookup: proposes what followed the latest earlier occurrence of the
// context's current suffix (NgramIndex over each sequence's whole history). No model runs, so a
// draft costs no forward step. Proposals are deterministic: each draft token's distribution is
// a point mass, which DraftResult::q marks with an empty vector (SpeculativeAccept then accepts
// with probability p(x) and otherwise resamples from p without x, lossless as for any q).
#pragma once

#include <unordered_map>

#include "speculative/drafter.h"
#include "speculative/ngram_index.h"

namespace tandem {

class NgramDrafter : public Drafter {
 public:
  // Throws Error(kInvalidArgument) unless 1 <= ngram_min <= ngram_max <= 64.
  NgramDrafter(int ngram_min, int ngram_max);
  // Uses request.history, seq, n_max and n_min; the target cache and the hidden are not read.
  void Draft(const DraftRequest& request, const KvCache& target_cache,
             DraftResult& result) override;
  double BytesPerStep() const override { return 0.0; }
  // Drops a sequence's index (its history was replaced); Draft also notices most replacements.
  void Forget(int32_t seq) { indexes_.erase(seq); }
  int last_match() const { return last_match_; }  // matched suffix length of the last Draft

 private:
  int ngram_min_, ngram_max_;
  std::unordered_map<int32_t, NgramIndex> indexes_;  // per target cache sequence
  int last_match_ = 0;
};

}  // namespace tandem
