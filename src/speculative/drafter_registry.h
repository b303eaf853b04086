// The drafter registry: one DrafterEntry per drafter, defined in the drafter's own file and listed
// once in drafter_list.h. An entry gives the drafter's name (its --spec-type value), its start-up
// checks, its warm-up and its factory; the command line, the engine and the server read them here
// and name no drafter themselves (docs/architecture.md § Adding a drafter).
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "speculative/drafter.h"
#include "speculative/drafter_list.h"
#include "speculative/spec_options.h"

namespace tandem {

class DrafterSet;
class Gemma4Assistant;
class Gemma4Model;
class ThreadPool;

// What a drafter drafts with beside the target: the model file (-md) it needs.
enum class DrafterModel {
  kNone,       // nothing: it needs no model file
  kAssistant,  // the target's MTP assistant (a gemma4-assistant file)
  kSeparate,   // a separate, smaller model with the target's vocabulary (a gemma4 file)
};

// What drafters are built from: the target and the models loaded for drafting.
struct DrafterSources {
  const Gemma4Model& target;
  const Gemma4Assistant* assistant = nullptr;  // DrafterModel::kAssistant, or null
  const Gemma4Model* draft_model = nullptr;    // DrafterModel::kSeparate, or null
  ThreadPool& pool;
  // The footprint limit of the one suffix index the suffix drafters share (suffix_index.h).
  size_t suffix_index_bytes = kDefaultSuffixIndexBytes;

  // Whether the model `model` names is loaded (kNone: always).
  bool Has(DrafterModel model) const;
};

// Builds an entry's drafter from `sources`, which hold its model (DrafterSources::Has); `made`
// holds the drafters of the entries listed before it (one may extend another's). Null: none.
using DrafterFactory = std::unique_ptr<Drafter> (*)(const DrafterSources& sources,
                                                    const DrafterSet& made);

struct DrafterEntry {
  // Its --spec-type value, and its name in reports, logs and the APIs' timings (SpecTypeName).
  const char* name = "";
  // What --spec-type's help says of it after its name, in parentheses ("": nothing).
  const char* help = "";

  // Start-up checks. The model it drafts with: the command line refuses it without a -md file
  // of that kind, and the engine refuses a request for it when its drafter is not loaded.
  DrafterModel model = DrafterModel::kNone;
  // --spec-type auto picks it when its model is the one loaded (at most one entry per model).
  bool auto_pick = false;
  // It drafts the prompt-lookup proposal (DraftRequest::lookup) first: its n-gram options are
  // checked (ValidateSpecOptions) and DraftPlanner looks the proposal up.
  bool lookup = false;
  // What a request that turns prompt lookup off gets instead (for a `lookup` entry); the entry's
  // own type: the same drafter, its planner not looking up (SpecOptions::ngram false).
  SpecType without_lookup = SpecType::kNone;
  // It drafts from earlier requests' text (suffix drafting: Drafter::ProposeFromPast, the planner
  // choosing per round between it and prompt lookup) and keeps each finished request's
  // (Drafter::LearnRequest).
  bool suffix = false;
  // What a request that turns suffix drafting off gets instead (for a `suffix` entry).
  SpecType without_suffix = SpecType::kNone;

  // It drafts trees where the request allows them (DraftRequest::tree, --draft-tree and the
  // request field; docs/mtp.md § Draft trees).
  bool trees = false;

  // Warm-up: the engine runs a few fixed-length rounds with it before the first request (its
  // model's weights paged in, its scratch grown), unless `warmed_by`'s drafter is loaded too
  // and warms the same model.
  bool warm_up = false;
  SpecType warmed_by = SpecType::kNone;

  DrafterFactory make = nullptr;
};

// Every drafter type, in drafter_list.h's order.
std::span<const SpecType> DrafterTypes();
// The entry of `type`; Error(kInternal) for kNone.
const DrafterEntry& DrafterEntryOf(SpecType type);
// The type whose name (SpecTypeName) is `name`, "none" included, or nullopt.
std::optional<SpecType> SpecTypeNamed(std::string_view name);
// The --spec-type values of the entries whose `flag` is set, in list order, as "a, b or c"
// (for messages and help: DrafterNamesWhere(&DrafterEntry::lookup)).
std::string DrafterNamesWhere(bool DrafterEntry::*flag);
// What --spec-type auto means when `loaded` is the drafter model loaded: the entry that
// auto-picks it, else kNone.
SpecType AutoSpecType(DrafterModel loaded);

#define TANDEM_DECLARE_DRAFTER_ENTRY(type, entry) extern const DrafterEntry entry;
TANDEM_DRAFTERS(TANDEM_DECLARE_DRAFTER_ENTRY)
#undef TANDEM_DECLARE_DRAFTER_ENTRY

}  // namespace tandem
