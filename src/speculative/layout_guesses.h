// What a request's model chose where its grammar left a choice, to draft the same choice the next
// time for free (issue 16; docs/mtp.md § Constrained drafting).
//
// JSON with free whitespace leaves a choice at every separator, and a model keeps one layout: the
// same newline and indentation before each key and each ',', the same space after each ':'.
// Those tokens are not forced, so without a guess the draft stops at them and the forced key
// after them waits for the next round. A choice is keyed by what the grammar allowed there (a
// hash of its mask) and the last byte of the token before it (after a key's closing quote, after
// ',' or ':', whichever the key); the model's choice at a key is guessed once it made
// that choice the last kRepeats times there. A guess enters the draft like a forced token (no
// drafter step, a point-mass q when sampling), so verification keeps the output exact: a wrong
// guess costs one verified row, a right one saves a target forward. So guesses are drafted only
// while the share of them verification accepted (of those it reached) beats what one more row
// costs (Pays): on a memory-bound target a row is a small share of a forward, on the tiny
// trained pair (whose 262k-row logits dominate) most of one.
#pragma once

#include <cstdint>
#include <unordered_map>

namespace tandem {

class LayoutGuesses {
 public:
  // The token to guess at `key`, or -1.
  int32_t Guess(uint64_t key) const {
    const auto it = entries_.find(key);
    return it != entries_.end() && it->second.repeats >= kRepeats ? it->second.token : -1;
  }
  // Whether a guess pays where one more verified row costs `row_cost` of a one-row forward.
  bool Pays(double row_cost) const { return (accepted_ + kPrior) / (reached_ + 1.0) > row_cost; }
  // A round whose guesses verification reached `reached` of and accepted `accepted` of.
  void RecordOutcome(int reached, int accepted) {
    accepted_ = accepted_ * kDecay + accepted;
    reached_ = reached_ * kDecay + reached;
  }
  // The model chose `token` at `key`.
  void Record(uint64_t key, int32_t token) {
    if (entries_.size() >= kMaxEntries && !entries_.contains(key)) entries_.clear();
    Entry& e = entries_[key];
    e.repeats = e.token == token ? e.repeats + 1 : 1;
    e.token = token;
  }

 private:
  static constexpr int kRepeats = 2;
  static constexpr size_t kMaxEntries = 4096;
  static constexpr double kPrior = 0.5, kDecay = 0.97;
  double accepted_ = 0, reached_ = 0;
  struct Entry {
    int32_t token = -1;
    int repeats = 0;
  };
  std::unordered_map<uint64_t, Entry> entries_;
};

}  // namespace tandem
