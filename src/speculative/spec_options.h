// What the user asked of speculative decoding: which drafter, the draft-length limits. Each
// option's default is here (SpecOptions), each limit (kMaxDraftTokens, kMaxNgramLength), and the
// one check of them (ValidateSpecOptions), which the command line, the server and the engine use.
#pragma once

#include <cstddef>
#include <string_view>

#include "speculative/drafter_list.h"

namespace tandem {

// Which drafter serves a request: kNone (plain decoding) or one per line of drafter_list.h, whose
// registry entry (DrafterEntryOf, drafter_registry.h) says what it is.
enum class SpecType {
  kNone,
#define TANDEM_SPEC_TYPE(type, entry) type,
  TANDEM_DRAFTERS(TANDEM_SPEC_TYPE)
#undef TANDEM_SPEC_TYPE
};

// The most tokens one round drafts from one source: a request's draft_max through the API, an
// adaptive round's prompt-lookup proposal, a grammar-forced run a draft goes on through.
inline constexpr int kMaxDraftTokens = 64;
// The longest context suffix prompt lookup matches (ngram_max).
inline constexpr int kMaxNgramLength = 64;
// The suffix index's default footprint limit (--spec-suffix-mib).
inline constexpr size_t kDefaultSuffixIndexBytes = size_t{64} << 20;

struct SpecOptions {
  SpecType type = SpecType::kNone;
  int draft_max = 16;        // most tokens drafted per round (llama.cpp --draft-max)
  int draft_min = 0;         // a round drafting fewer is dropped (plain step instead)
  float draft_p_min = 0.0f;  // stop drafting when the draft's top-10 probability falls below
  bool adaptive = true;      // choose each round's length from measured acceptance and costs
  int ngram_min = 3;         // shortest context suffix looked up (types that UsesNgram) ...
  int ngram_max = 8;         // ... longest (the longest that recurs is used)
  // The sources a request allows of those its type drafts from: a request may turn either off
  // (the server's "speculative" field). Off, ngram keeps the type's planner from looking up the
  // context, and suffix keeps it from drafting from (and adding to) earlier requests' text.
  bool ngram = true;
  bool suffix = true;
  // Draft trees (docs/mtp.md § Draft trees): 0 drafts chains; 2..kMaxTreeWidth lets the MTP
  // assistant branch to that many tokens where it is unsure (--draft-tree).
  int tree_width = 0;

  bool operator==(const SpecOptions&) const = default;
};

// Its --spec-type value ("none" for kNone).
const char* SpecTypeName(SpecType type);
// Whether `type` drafts by prompt lookup (its n-gram options apply).
bool UsesNgram(SpecType type);
// What a request that turns prompt lookup off gets instead of `type` (`type` itself when it does
// not draft by lookup).
SpecType WithoutLookup(SpecType type);
// Whether `type` drafts from earlier requests' text (suffix drafting), and what a request that
// turns that off gets instead (`type` itself when it does not).
bool UsesSuffix(SpecType type);
SpecType WithoutSuffix(SpecType type);

// Throws Error(kInvalidArgument), the message starting with `what` (the flags or fields that set
// them), unless 1 <= min <= max <= kMaxNgramLength.
void ValidateNgramLengths(int min, int max, std::string_view what);

// Throws Error(kInvalidArgument) unless 0 <= draft_min <= draft_max <= kMaxDraftTokens,
// draft_p_min is in [0, 1], tree_width is 0 or in [2, kMaxTreeWidth], and, when `spec.type` drafts
// by prompt lookup, its n-gram lengths pass ValidateNgramLengths.
void ValidateSpecOptions(const SpecOptions& spec);

}  // namespace tandem
