// Flat hash tables for the vocabulary: token text -> id, and (left id, right id) -> merge.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

// Text -> id over a token list it does not own (the list's elements must outlive it, unchanged;
// moving the vector is fine, it keeps its buffer). Open addressing with linear probing: one cache
// line per probe, no node allocations, which matters for 262k tokens and ~1.5M lookups while
// indexing merges.
class TokenIndex {
 public:
  TokenIndex() = default;
  // Indexes `tokens`. Returns the ids (first, second) of the first text that occurs twice, or
  // (-1, -1) if all texts are distinct; duplicates keep the first id.
  std::pair<int32_t, int32_t> Build(const std::vector<std::string>& tokens);

  // Id of the token whose text is exactly `text`, or -1.
  int32_t Find(std::string_view text) const { return FindConcat(text, {}); }
  // Id of the token whose text is `left` followed by `right`, or -1 (no concatenation is built).
  int32_t FindConcat(std::string_view left, std::string_view right) const;

 private:
  struct Slot {
    uint32_t hash_tag;  // high bits of the hash, to skip most string compares
    int32_t id;         // -1 = empty
  };
  static uint64_t Hash(std::string_view left, std::string_view right);

  const std::string* tokens_ = nullptr;  // the indexed vector's data()
  std::vector<Slot> slots_;              // [power of two >= 2 * n_tokens]
  uint64_t mask_ = 0;
};

// (left id, right id) -> (rank, merged id), open addressing. Keys are unique: Insert keeps the
// first value given for a pair.
class MergeTable {
 public:
  struct Merge {
    int32_t rank;
    int32_t result;
  };
  explicit MergeTable(size_t expected = 0);
  void Insert(int32_t left, int32_t right, Merge merge);
  // The merge of the pair, or nullptr.
  const Merge* Find(int32_t left, int32_t right) const;
  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key;  // kEmpty or (left << 32 | right)
    Merge merge;
  };
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static uint64_t Key(int32_t left, int32_t right) {
    return (uint64_t{static_cast<uint32_t>(left)} << 32) | static_cast<uint32_t>(right);
  }
  static uint64_t Mix(uint64_t key);
  void Grow();

  std::vector<Slot> slots_;
  uint64_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tandem
