// Token logprobs (sampling/logprobs.h) in the three shapes clients read: OpenAI chat
// (`choices[0].logprobs.content`), OpenAI legacy completions (`tokens`, `token_logprobs`,
// `top_logprobs`, `text_offset`) and llama-server's `completion_probabilities`. A token is its
// text (invalid UTF-8, a part of a character, as U+FFFD) with its exact `bytes`.
#pragma once

#include <vector>

#include "sampling/logprobs.h"
#include "server/json_fields.h"
#include "tokenizer/tokenizer.h"

namespace tandem::server {

// [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}], `n_top` alternatives each.
Json ChatLogprobsContent(const std::vector<TokenLogprobs>& entries, int n_top,
                         const Tokenizer& tokenizer);

// {tokens, token_logprobs, top_logprobs: [{text: logprob}], text_offset}; `text_offset` is the
// byte offset of the first entry in the completion text and is advanced past the last.
Json CompletionLogprobs(const std::vector<TokenLogprobs>& entries, int n_top,
                        const Tokenizer& tokenizer, size_t& text_offset);

// llama-server: [{id, token, logprob, bytes, top_logprobs: [{id, token, logprob, bytes}]}].
Json CompletionProbabilities(const std::vector<TokenLogprobs>& entries, int n_top,
                             const Tokenizer& tokenizer);

}  // namespace tandem::server
