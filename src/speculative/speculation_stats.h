// Honest speculative-decoding statistics: what was drafted, what was accepted at each draft
// position, where the time went, and how much acceptance came from a repetition loop.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem {

// Drafts of one source (prompt lookup, suffix drafting, or the model drafter: MTP or a draft
// model), by position inside that source's part of the draft (a model extension of a free
// proposal starts at 0). A model part is counted only when verification reached it (every free
// draft before it was accepted), so ngram.drafted + suffix.drafted + model.drafted can be less
// than SpeculationStats::drafted.
struct SourceStats {
  int64_t drafted = 0, accepted = 0;
  std::vector<int64_t> drafted_at, accepted_at;
  // A part of `n` drafts whose first `accepted` were accepted.
  void Record(int n, int n_accepted);
  void Add(const SourceStats& other);
  std::vector<double> AcceptanceByPosition() const;
  nlohmann::json ToJson() const;
};

struct SpeculationStats {
  int64_t rounds = 0;               // verification rounds (target forwards with drafts)
  int64_t plain_steps = 0;          // target forwards without drafts
  int64_t drafted = 0;              // draft tokens proposed
  int64_t accepted = 0;             // draft tokens accepted
  int64_t forced = 0;               // draft tokens forced by a grammar (no drafter step; not
                                    // counted in drafted/accepted)
  int64_t forced_accepted = 0;      // ... of which accepted
  int64_t guessed = 0;              // draft tokens guessed from the request's layout habits
                                    // where the grammar left a choice (LayoutGuesses; no
                                    // drafter step; not counted in drafted/accepted/forced)
  int64_t guessed_accepted = 0;     // ... of which accepted
  int64_t generated = 0;            // tokens emitted after the prompt
  int64_t repetition_accepted = 0;  // accepted tokens that fell inside a detected repetition loop
  int64_t probes = 0;               // rounds drafted only to look for acceptance (controller)
  int64_t remeasures = 0;           // plain steps taken while drafting paid, to re-time them
  int64_t continued = 0;            // requests that started from the estimates of their slot's
                                    // previous request (DraftPlanner::ContinueFrom)
  int64_t limited_logit_rows = 0;   // target rows whose logits were computed only for the few
                                    // tokens a grammar allowed there
  int64_t tree_rounds = 0;          // rounds that verified a draft tree (docs/mtp.md)
  int64_t tree_branches = 0;        // ... their drafts beside the trunk (in `drafted`)
  int64_t tree_branches_accepted = 0;  // ... of which accepted (in `accepted`)
  std::vector<int64_t> drafted_at;     // [i]: rounds that drafted a token at draft position i
  std::vector<int64_t> accepted_at;    // [i]: ... and had it accepted
  double draft_ms = 0;                 // time in the drafter
  double verify_ms = 0;                // time in target forwards (verification and plain steps)
  double plain_ms = 0;                 // ... of which plain (single-row) steps
  double plan_ms = 0;                  // in the draft planner (lookup index, controllers): paid
                                       // every step a drafter serves the request, drafting or not
  double other_ms = 0;                 // sampling, bookkeeping
  SourceStats ngram;                   // drafts proposed by prompt lookup (the first of a round)
  SourceStats suffix;                  // drafts proposed by suffix drafting (earlier requests'
                                       // text), in place of lookup's (the first of a round)
  SourceStats model;                   // drafts of the model drafter (after any lookup drafts)
  SourceStats grammar;  // the grammar's drafts (forced and guessed, after the drafters'), counted
                        // when verification reached them, like `model`; `forced` and `guessed`
                        // count them all
  // The sources by the names the reports use (JSON `by_source`, /metrics, the CLI).
  struct NamedSource {
    const char* name;
    const SourceStats* stats;
  };
  std::array<NamedSource, 4> Sources() const {
    return {{{"ngram", &ngram}, {"suffix", &suffix}, {"model", &model}, {"grammar", &grammar}}};
  }

  // A round that drafted n_drafted tokens, the first n_lookup of them free ones: by prompt
  // lookup, or by suffix drafting when `from_suffix`.
  void RecordRound(int n_drafted, int n_accepted, int n_lookup = 0, bool from_suffix = false);
  // A round's grammar drafts after `n_drafter` drafter ones (`guessed`[i]: the i-th is a layout
  // guess, else forced), `n_accepted` of all its drafts accepted (forced, guessed, their
  // accepted counts and `grammar`; not drafted/accepted). Returns how many of its guesses
  // verification reached (those up to the first rejected draft) and how many it accepted.
  struct GuessOutcome {
    int reached = 0, accepted = 0;
  };
  GuessOutcome RecordForced(const std::vector<bool>& guessed, int n_drafter, int n_accepted);
  double AcceptanceRate() const { return drafted ? double(accepted) / double(drafted) : 0.0; }
  // Grammar drafts accepted of those verification reached (`grammar`): a grammar draft after a
  // rejected drafter draft was never tested, so forced_accepted / forced understates it.
  double ForcedAcceptanceRate() const {
    return grammar.drafted ? double(grammar.accepted) / double(grammar.drafted) : 0.0;
  }
  double MeanAcceptedLength() const { return rounds ? double(accepted) / double(rounds) : 0.0; }
  // Emitted tokens per target forward (1.0 for plain decoding).
  double TokensPerTargetForward() const;
  std::vector<double> AcceptanceByPosition() const;
  // Speedup over plain decoding estimated from this run: the tokens its target forwards emitted,
  // times what a plain step costs, over the time spent planning, drafting and verifying (all
  // that plain decoding would not have paid: a run that drafts nothing and plans at a cost
  // estimates below 1). A plain step costs the mean of this run's plain steps when it took at
  // least kMinBaselinePlainSteps of them (or drafted nothing: then every step is one). With
  // fewer, one odd step would stand for them all (a single fast one can make a run that emits
  // several tokens per forward look slower than plain decoding), so the mean verification
  // forward stands in: an upper bound, as verifying T rows costs at least one plain step
  // (SpeedupIsUpperBound()).
  static constexpr int64_t kMinBaselinePlainSteps = 8;
  double EstimatedSpeedup() const;
  bool SpeedupIsUpperBound() const { return rounds > 0 && plain_steps < kMinBaselinePlainSteps; }
  void Add(const SpeculationStats& other);
  nlohmann::json ToJson() const;
};

// Detects whether the token at the end of `tokens` continues a repetition loop with a period of
// at most `max_period` tokens: the last tokens equal the ones a period before for
// min((min_repeats - 1) * period, max(16, period / 2)) tokens: a short span repeated
// `min_repeats` times, or a long block (lines of text) copied for at least 16 tokens and half its
// length. O(max_period) per call on ordinary text.
bool InRepetitionLoop(const std::vector<int32_t>& tokens, int max_period = 256,
                      int min_repeats = 3);

}  // namespace tandem
