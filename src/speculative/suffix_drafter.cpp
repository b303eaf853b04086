// Suffix drafting's two registry entries: suffix alone, and suffix (or prompt lookup) then MTP.
#include "speculative/suffix_drafter.h"

#include "speculative/drafter_registry.h"
#include "speculative/drafter_set.h"

namespace tandem {

std::vector<int32_t> SuffixDrafter::ProposeFromPast(std::string_view tenant,
                                                    std::span<const int32_t> context, int n_max,
                                                    int* match) {
  SuffixIndex::Proposal p = index_->Propose(tenant, context, n_max);
  if (match != nullptr) *match = p.match;
  return std::move(p.tokens);
}

namespace {

std::unique_ptr<Drafter> MakeSuffixDrafter(const DrafterSources& sources, const DrafterSet&) {
  return std::make_unique<SuffixDrafter>(std::make_shared<SuffixIndex>(sources.suffix_index_bytes),
                                         nullptr);
}

// Shares the index of suffix's drafter (listed before it; always built: it needs no model), and
// the MTP drafter (listed before it) extends the proposals.
std::unique_ptr<Drafter> MakeSuffixChainDrafter(const DrafterSources&, const DrafterSet& made) {
  auto* suffix = dynamic_cast<SuffixDrafter*>(made.For(SpecType::kSuffix));
  Drafter* mtp = made.For(SpecType::kMtp);
  if (suffix == nullptr || mtp == nullptr) return nullptr;
  return std::make_unique<SuffixDrafter>(suffix->index(), mtp);
}

}  // namespace

// --spec-type suffix: free drafts from the tenant's earlier requests alone, no model; a request
// that turns suffix drafting off decodes plainly. Nothing to warm up.
constinit const DrafterEntry kSuffixDrafterEntry = {
    .name = "suffix",
    .help = "drafts from earlier requests",
    .suffix = true,
    .make = MakeSuffixDrafter,
};

// --spec-type suffix-chain: each round, suffix drafting or prompt lookup (whichever the planner
// rates higher) proposes, and the MTP assistant extends the proposal (or drafts alone), as in
// chain. Without suffix drafting it is chain; without lookup, suffix then MTP. Chain warms the
// assistant.
constinit const DrafterEntry kSuffixChainDrafterEntry = {
    .name = "suffix-chain",
    .help = "suffix or ngram, then mtp",
    .model = DrafterModel::kAssistant,
    .lookup = true,
    .without_lookup = SpecType::kSuffixChain,
    .suffix = true,
    .without_suffix = SpecType::kChain,
    .trees = true,
    .warm_up = true,
    .warmed_by = SpecType::kChain,
    .make = MakeSuffixChainDrafter,
};

}  // namespace tandem
