// Prompt lookup over a whole context: an index of every n-gram (n in [ngram_min, ngram_max]) of
// the tokens seen so far (prompt and generated) to the position just after its latest
// occurrence, kept up to date as tokens arrive (O(ngram_max) per token). When the context's
// current suffix occurred before, what followed it then is proposed as the continuation.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace tandem {

class NgramIndex {
 public:
  // Throws Error(kInvalidArgument) unless 1 <= ngram_min <= ngram_max <= kMaxNgramLength.
  NgramIndex(int ngram_min, int ngram_max);

  void Clear();
  void Append(int32_t token);
  // Makes the index cover `tokens`: appends what is new when the indexed tokens are a prefix of
  // it (checked at a few positions, see ngram_index.cpp), else rebuilds from scratch.
  void Sync(std::span<const int32_t> tokens);

  // Up to `n_max` tokens continuing the context: the longest suffix of n in [ngram_min,
  // ngram_max] tokens that occurred before is looked up, and the tokens that followed its
  // latest earlier occurrence are proposed (read on through the proposal itself where that
  // occurrence is less than n_max tokens back, so a loop continues round). `match` (optional)
  // receives the matched suffix length, 0 when nothing recurs. Deterministic.
  std::vector<int32_t> Propose(int n_max, int* match = nullptr) const;

  size_t size() const { return tokens_.size(); }
  std::span<const int32_t> tokens() const { return tokens_; }

 private:
  uint64_t Key(size_t end, int n) const;  // hash of tokens_[end - n, end) and n
  bool Equal(size_t a_end, size_t b_end, int n) const;

  int ngram_min_, ngram_max_;
  std::vector<int32_t> tokens_;
  // Key(end, n) -> end of the latest occurrence whose next token is known (end < size()).
  std::unordered_map<uint64_t, uint32_t> latest_;
};

}  // namespace tandem
