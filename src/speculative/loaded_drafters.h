// The drafters of the loaded Gemma 4 models: what `tandem run`, `bench`, `serve` and the tests
// hand the engine beside the target.
#pragma once

#include "speculative/drafter_set.h"

namespace tandem {

class Gemma4Assistant;
class Gemma4Model;
class ThreadPool;

// MTP drafting when `assistant` is given, draft-model drafting when `draft_model` is (either may
// be null). Throws Error(kInvalidArgument) when the draft model's vocabulary differs from the
// target's.
DrafterSet MakeDrafters(const Gemma4Model& target, const Gemma4Assistant* assistant,
                        const Gemma4Model* draft_model, ThreadPool& pool);

}  // namespace tandem
