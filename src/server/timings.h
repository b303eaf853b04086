// The `timings` object every completion carries (llama-server's field names) and the shared
// token counts behind `usage`.
#pragma once

#include "server/generation_stream.h"
#include "server/json_fields.h"
#include "speculative/spec_options.h"

namespace tandem::server {

// {prompt_n, cache_n, prompt_ms, prompt_per_token_ms, prompt_per_second, predicted_n,
//  predicted_ms, predicted_per_token_ms, predicted_per_second, draft_n, draft_n_accepted,
//  speculative: {enabled, type, draft_max, rounds, drafted, accepted, acceptance_rate,
//  acceptance_by_position, ..., by_source: {ngram, suffix, model, grammar: {drafted, accepted,
//  acceptance_rate, acceptance_by_position}}}}. `spec` is what the request ran with.
Json TimingsJson(const GenerationTotals& totals, const SpecOptions& spec);

// What streamed chunks carry while the request runs (null when nothing changed):
// {predicted_n, speculative: {rounds, drafted, accepted, acceptance_by_position, ...,
//  draft_rounds: [[drafted, accepted] of each round since the previous chunk]}}.
Json LiveTimingsJson(const LiveSpec& live);

}  // namespace tandem::server
