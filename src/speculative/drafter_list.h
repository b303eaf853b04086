// The drafters, one line each: X(enumerator, entry). `enumerator` becomes SpecType::enumerator
// (spec_options.h); `entry` is the drafter's DrafterEntry (drafter_registry.h), defined in the
// drafter's own file. A new drafter is its file and one line here
// (docs/architecture.md § Adding a drafter). The order is the order in which drafters are built,
// draft in an engine step, are warmed up and are listed in --spec-type's help.
#pragma once

#define TANDEM_DRAFTERS(X)           \
  X(kMtp, kMtpDrafterEntry)          \
  X(kDraft, kDraftModelDrafterEntry) \
  X(kNgram, kNgramDrafterEntry)      \
  X(kChain, kChainDrafterEntry)      \
  X(kSuffix, kSuffixDrafterEntry)    \
  X(kSuffixChain, kSuffixChainDrafterEntry)
