// The drafters of the loaded models: what `tandem run`, `bench`, `serve` and the tests hand the
// engine beside the target.
#pragma once

#include "speculative/drafter_registry.h"
#include "speculative/drafter_set.h"

namespace tandem {

// One drafter per registry entry whose model `sources` hold (DrafterSources::Has), each made by
// its entry's factory, in the registry's order. Throws what a factory throws (the draft model's
// vocabulary differs from the target's: Error(kInvalidArgument)).
DrafterSet MakeDrafters(const DrafterSources& sources);

}  // namespace tandem
