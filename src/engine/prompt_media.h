// A prompt's media rows as the engine sees them: their identity for the prompt cache, their
// checks, and which rows of a prefill chunk they are (docs/gemma4.md § Media rows).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/request.h"

namespace tandem {

// Per prompt position, what the prompt cache compares: a text position's token id, a media
// position's content key and index mixed into a value no token id takes.
std::vector<uint64_t> PromptKeys(const EngineRequest& request);

// Throws Error(kInvalidArgument) for media out of the prompt's range, out of order or
// overlapping, without embeddings of count x n_embd floats (or a job to make them), or, when the
// rows of an image attend both ways (`both_ways` and not PromptMedia::audio: they must then
// share one forward), longer than `max_batch` rows.
void ValidatePromptMedia(const EngineRequest& request, int n_embd, int max_batch, bool both_ways);

// The media item covering prompt position `pos`, or null.
const PromptMedia* MediaAt(const std::vector<PromptMedia>& media, int32_t pos);

}  // namespace tandem
