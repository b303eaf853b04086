// Flat hash tables for the vocabulary: token text -> id, and (left id, right id) -> merge.
#include "tokenizer/token_index.h"

#include <algorithm>
#include <bit>

namespace tandem {
namespace {

size_t TableSize(size_t n) {
  return std::bit_ceil(std::max<size_t>(16, n * 2));
}

}  // namespace

uint64_t TokenIndex::Hash(std::string_view left, std::string_view right) {
  // FNV-1a over the bytes of left then right, then a final avalanche so low bits are well mixed.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : left) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  for (const char c : right) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  return h;
}

std::pair<int32_t, int32_t> TokenIndex::Build(const std::vector<std::string>& tokens) {
  tokens_ = tokens.data();
  slots_.assign(TableSize(tokens.size()), Slot{0, -1});
  mask_ = slots_.size() - 1;
  std::pair<int32_t, int32_t> duplicate{-1, -1};
  for (size_t id = 0; id < tokens.size(); ++id) {
    const std::string_view text = tokens[id];
    const uint64_t h = Hash(text, {});
    const auto tag = static_cast<uint32_t>(h >> 32);
    for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& slot = slots_[i];
      if (slot.id < 0) {
        slot = {tag, static_cast<int32_t>(id)};
        break;
      }
      if (slot.hash_tag == tag && tokens[slot.id] == text) {
        if (duplicate.first < 0) duplicate = {slot.id, static_cast<int32_t>(id)};
        break;
      }
    }
  }
  return duplicate;
}

int32_t TokenIndex::FindConcat(std::string_view left, std::string_view right) const {
  if (slots_.empty()) return -1;
  const uint64_t h = Hash(left, right);
  const auto tag = static_cast<uint32_t>(h >> 32);
  for (uint64_t i = h & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.id < 0) return -1;
    if (slot.hash_tag != tag) continue;
    const std::string& text = tokens_[slot.id];
    if (text.size() == left.size() + right.size() && text.compare(0, left.size(), left) == 0 &&
        text.compare(left.size(), right.size(), right) == 0) {
      return slot.id;
    }
  }
}

MergeTable::MergeTable(size_t expected)
    : slots_(TableSize(expected), Slot{kEmpty, {}}), mask_(slots_.size() - 1) {}

uint64_t MergeTable::Mix(uint64_t key) {
  key ^= key >> 31;
  key *= 0x9e3779b97f4a7c15ULL;
  key ^= key >> 29;
  return key;
}

void MergeTable::Grow() {
  std::vector<Slot> old;
  old.swap(slots_);
  slots_.assign(old.size() * 2, Slot{kEmpty, {}});
  mask_ = slots_.size() - 1;
  for (const Slot& s : old) {
    if (s.key == kEmpty) continue;
    uint64_t i = Mix(s.key) & mask_;
    while (slots_[i].key != kEmpty) i = (i + 1) & mask_;
    slots_[i] = s;
  }
}

void MergeTable::Insert(int32_t left, int32_t right, Merge merge) {
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  const uint64_t key = Key(left, right);
  for (uint64_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
    Slot& slot = slots_[i];
    if (slot.key == key) return;
    if (slot.key == kEmpty) {
      slot = {key, merge};
      ++size_;
      return;
    }
  }
}

const MergeTable::Merge* MergeTable::Find(int32_t left, int32_t right) const {
  const uint64_t key = Key(left, right);
  for (uint64_t i = Mix(key) & mask_;; i = (i + 1) & mask_) {
    const Slot& slot = slots_[i];
    if (slot.key == key) return &slot.merge;
    if (slot.key == kEmpty) return nullptr;
  }
}

}  // namespace tandem
