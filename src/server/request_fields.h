// Request fields the OpenAI and Anthropic bodies share: sampling (temperature, top_p, top_k,
// min_p, seed, penalties, logit_bias), stop strings and tandem's "speculative" extension.
#pragma once

#include <string_view>

#include "server/generation_request.h"
#include "server/json_fields.h"

namespace tandem::server {

// Reads temperature, top_p, top_k (-1 means off, as 0), min_p, seed (negative: random),
// presence_penalty, frequency_penalty, repeat_penalty, repeat_last_n and logit_bias
// ({"ID": bias} or [[ID, bias], ...]; bias <= -100 bans the token) into request.sampling.
// Throws Error(kInvalidArgument) naming the field.
void ParseSamplingFields(const Json& body, GenerationRequest& request);

// Reads a stop field: a string or an array of at most 16 strings. Empty strings are dropped.
void ParseStopField(const Json& body, std::string_view name, GenerationRequest& request);

// Reads "speculative": {"enabled": bool, "draft_max": int in [0, 64], "ngram": bool}.
void ParseSpeculativeField(const Json& body, GenerationRequest& request);

}  // namespace tandem::server
