// --spec-type ngram: prompt lookup alone, no model. DraftPlanner looks the proposal up in the
// context (DraftRequest::lookup) and ChainDrafter without a model drafts exactly it; a request
// that turns lookup off decodes plainly. Nothing to warm up: it runs no model.
#include "speculative/chain_drafter.h"
#include "speculative/drafter_registry.h"

namespace tandem {
namespace {

std::unique_ptr<Drafter> MakeNgramDrafter(const DrafterSources&, const DrafterSet&) {
  return std::make_unique<ChainDrafter>(nullptr);
}

}  // namespace

constinit const DrafterEntry kNgramDrafterEntry = {
    .name = "ngram",
    .help = "prompt lookup",
    .lookup = true,
    .make = MakeNgramDrafter,
};

}  // namespace tandem
