#include "speculative/loaded_drafters.h"

namespace tandem {

DrafterSet MakeDrafters(const DrafterSources& sources) {
  DrafterSet set;
  for (const SpecType type : DrafterTypes()) {
    const DrafterEntry& entry = DrafterEntryOf(type);
    if (sources.Has(entry.model)) set.Set(type, entry.make(sources, set));
  }
  return set;
}

}  // namespace tandem
