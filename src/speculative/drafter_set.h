// The drafters an engine serves speculation with, at most one of each kind, and the one place that
// says which drafter serves which --spec-type. Built from the loaded models by MakeDrafters
// (loaded_drafters.h); the engine owns it.
#pragma once

#include <memory>
#include <vector>

#include "speculative/drafter.h"
#include "speculative/spec_options.h"

namespace tandem {

struct DrafterSet {
  std::unique_ptr<Drafter> mtp;          // the MTP assistant (--spec-type mtp)
  std::unique_ptr<Drafter> draft_model;  // a separate draft model (--spec-type draft)
  std::unique_ptr<Drafter> lookup;       // prompt lookup alone (--spec-type ngram)
  std::unique_ptr<Drafter> chain;        // prompt lookup extended by `mtp` (--spec-type chain)

  // The drafter serving `type`, or null (kNone, or its drafter is not loaded).
  Drafter* For(SpecType type) const {
    switch (type) {
      case SpecType::kMtp:
        return mtp.get();
      case SpecType::kChain:
        return chain.get();
      case SpecType::kDraft:
        return draft_model.get();
      case SpecType::kNgram:
        return lookup.get();
      case SpecType::kNone:
        break;
    }
    return nullptr;
  }
  // Every loaded drafter, in a fixed order.
  std::vector<Drafter*> All() const {
    std::vector<Drafter*> all;
    for (Drafter* d : {mtp.get(), draft_model.get(), lookup.get(), chain.get()}) {
      if (d != nullptr) all.push_back(d);
    }
    return all;
  }
};

}  // namespace tandem
