// Chained drafting: the lookup proposal first, one batched model extension after it.
#include "speculative/chain_drafter.h"

#include <algorithm>

#include "speculative/draft_constraint.h"
#include "speculative/drafter_registry.h"
#include "speculative/drafter_set.h"

namespace tandem {

void ChainDrafter::DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache) {
  extend_.clear();
  history_.clear();
  std::vector<size_t> owner;  // [extend_] its job
  for (size_t j = 0; j < jobs.size(); ++j) {
    DraftJob& job = jobs[j];
    const DraftRequest& r = job.request;
    job.ClearOutputs();
    const int k = std::min<int>(static_cast<int>(r.lookup.size()), r.n_max);
    job.result.tokens.assign(r.lookup.begin(), r.lookup.begin() + k);
    job.result.n_lookup = k;
    if (r.sampler != nullptr) job.result.q.assign(k, {});  // point masses
    if (model_ == nullptr || r.n_max - k <= 0) continue;
    // The model extends the lookup tokens: a constraint follows them first (one it rejects ends
    // the constrained draft, see DraftConstraint::Advance).
    if (r.constraint != nullptr) {
      for (int i = 0; i < k; ++i) r.constraint->Advance(r.lookup[i]);
    }
    DraftJob ext{r, {}, 0, {}};
    std::vector<int32_t> history(r.history.begin(), r.history.end());
    history.insert(history.end(), r.lookup.begin(), r.lookup.begin() + k);
    if (k > 0) ext.request.last = r.lookup[k - 1];
    ext.request.lookup = {};
    ext.request.n_max = r.n_max - k;
    ext.request.n_min = 0;
    history_.push_back(std::move(history));
    extend_.push_back(std::move(ext));
    owner.push_back(j);
  }
  // The spans point into history_, which no longer reallocates.
  for (size_t e = 0; e < extend_.size(); ++e) extend_[e].request.history = history_[e];
  if (!extend_.empty()) model_->DraftBatch(extend_, target_cache);
  for (size_t e = 0; e < extend_.size(); ++e) {
    DraftJob& job = jobs[owner[e]];
    DraftJob& ext = extend_[e];
    job.ms = ext.ms;
    job.result.steps = ext.result.steps;
    if (!ext.error.empty()) {
      job.error = ext.error;
      job.result.Clear();
      continue;
    }
    DraftResult& out = job.result;
    out.tokens.insert(out.tokens.end(), ext.result.tokens.begin(), ext.result.tokens.end());
    for (std::vector<float>& q : ext.result.q) out.q.push_back(std::move(q));
    if (ext.result.is_tree()) {  // a model-alone round (no lookup tokens) may draft a tree
      out.tree_parent = std::move(ext.result.tree_parent);
      out.tree_p = std::move(ext.result.tree_p);
      out.trunk = ext.result.trunk;
    }
  }
  for (DraftJob& job : jobs) {
    ApplyDraftMin(job.request, job.result);
    if (job.result.tokens.empty()) job.result.n_lookup = 0;
  }
}

namespace {

// The MTP drafter (listed before chain) extends the lookup proposal.
std::unique_ptr<Drafter> MakeChainDrafter(const DrafterSources&, const DrafterSet& made) {
  Drafter* mtp = made.For(SpecType::kMtp);
  return mtp != nullptr ? std::make_unique<ChainDrafter>(mtp) : nullptr;
}

}  // namespace

// --spec-type chain: prompt lookup first, the MTP assistant extending where it ends; what auto
// means with an assistant loaded. Without lookup it is mtp; its rounds warm the assistant (the
// warm-up's prompt recurs nowhere, so the assistant drafts every round).
constinit const DrafterEntry kChainDrafterEntry = {
    .name = "chain",
    .help = "ngram, then mtp",
    .model = DrafterModel::kAssistant,
    .auto_pick = true,
    .lookup = true,
    .without_lookup = SpecType::kMtp,
    .trees = true,
    .warm_up = true,
    .make = MakeChainDrafter,
};

}  // namespace tandem
