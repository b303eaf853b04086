// The drafters an engine serves speculation with, at most one per SpecType. Built from the loaded
// models by MakeDrafters (loaded_drafters.h), one per registry entry whose model is loaded
// (drafter_registry.h); the engine owns it.
#pragma once

#include <array>
#include <memory>
#include <vector>

#include "base/error.h"
#include "speculative/drafter.h"
#include "speculative/spec_options.h"

namespace tandem {

class DrafterSet {
 public:
  // The drafter serving `type`, or null (kNone, or its drafter is not loaded).
  Drafter* For(SpecType type) const {
    return type == SpecType::kNone ? nullptr : drafters_[Index(type)].get();
  }
  // Makes `drafter` (may be null) serve `type`, in place of the one that did (Error(kInternal)
  // for kNone).
  void Set(SpecType type, std::unique_ptr<Drafter> drafter) {
    drafters_[Index(type)] = std::move(drafter);
  }
  // Takes `type`'s drafter out of the set (null if none).
  std::unique_ptr<Drafter> Take(SpecType type) { return std::move(drafters_[Index(type)]); }
  // Every drafter in the set, in the registry's order (drafter_list.h).
  std::vector<Drafter*> All() const {
    std::vector<Drafter*> all;
    for (const auto& d : drafters_) {
      if (d != nullptr) all.push_back(d.get());
    }
    return all;
  }

 private:
#define TANDEM_COUNT_DRAFTER(type, entry) +1
  static constexpr size_t kDrafters = 0 TANDEM_DRAFTERS(TANDEM_COUNT_DRAFTER);
#undef TANDEM_COUNT_DRAFTER
  // kNone is 0, the drafters' types follow in the list's order.
  static size_t Index(SpecType type) {
    if (type == SpecType::kNone) Fail(ErrorKind::kInternal, "no drafter serves plain decoding");
    return static_cast<size_t>(type) - 1;
  }

  std::array<std::unique_ptr<Drafter>, kDrafters> drafters_;
};

}  // namespace tandem
