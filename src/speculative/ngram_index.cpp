#include "speculative/ngram_index.h"

#include "base/mix64.h"
#include "speculative/spec_options.h"

namespace tandem {
namespace {

uint64_t WithLength(uint64_t h, int n) {
  return Mix64(h + 0x9E3779B97F4A7C15ull * n);
}

}  // namespace

NgramIndex::NgramIndex(int ngram_min, int ngram_max)
    : ngram_min_(ngram_min), ngram_max_(ngram_max) {
  ValidateNgramLengths(ngram_min, ngram_max, "n-gram lengths");
}

void NgramIndex::Clear() {
  tokens_.clear();
  latest_.clear();
}

// Hashes the tokens backwards from `end`, so one pass yields the keys of every length.
uint64_t NgramIndex::Key(size_t end, int n) const {
  uint64_t h = 0;
  for (int i = 1; i <= n; ++i) h = Mix64(h ^ static_cast<uint32_t>(tokens_[end - i]));
  return WithLength(h, n);
}

bool NgramIndex::Equal(size_t a_end, size_t b_end, int n) const {
  for (int i = 1; i <= n; ++i) {
    if (tokens_[a_end - i] != tokens_[b_end - i]) return false;
  }
  return true;
}

void NgramIndex::Append(int32_t token) {
  // The n-grams ending at the old end now have a known next token: index them (the latest
  // occurrence wins). O(ngram_max) per token.
  const size_t end = tokens_.size();
  uint64_t h = 0;
  for (int n = 1; n <= ngram_max_ && static_cast<size_t>(n) <= end; ++n) {
    h = Mix64(h ^ static_cast<uint32_t>(tokens_[end - n]));
    if (n >= ngram_min_) latest_[WithLength(h, n)] = static_cast<uint32_t>(end);
  }
  tokens_.push_back(token);
}

void NgramIndex::Sync(std::span<const int32_t> tokens) {
  const size_t n = tokens_.size();
  // A prefix check at the first, middle and last indexed token: the index is a per-slot cache
  // of the slot's history, which only grows during a request and is replaced by a new one.
  // A miss it cannot see only makes proposals worse (they are verified), never output wrong.
  const bool prefix = n <= tokens.size() &&
                      (n == 0 || (tokens_[0] == tokens[0] && tokens_[n / 2] == tokens[n / 2] &&
                                  tokens_[n - 1] == tokens[n - 1]));
  if (!prefix) Clear();
  for (size_t i = tokens_.size(); i < tokens.size(); ++i) Append(tokens[i]);
}

std::vector<int32_t> NgramIndex::Propose(int n_max, int* match) const {
  std::vector<int32_t> out;
  if (match) *match = 0;
  const size_t end = tokens_.size();
  for (int n = ngram_max_; n >= ngram_min_ && n_max > 0; --n) {
    if (static_cast<size_t>(n) > end) continue;
    const auto it = latest_.find(Key(end, n));
    if (it == latest_.end() || !Equal(it->second, end, n)) continue;  // absent, or a collision
    if (match) *match = n;
    const size_t from = it->second;  // < end
    for (int i = 0; i < n_max; ++i) {
      const size_t at = from + i;
      out.push_back(at < end ? tokens_[at] : out[at - end]);
    }
    break;
  }
  return out;
}

}  // namespace tandem
