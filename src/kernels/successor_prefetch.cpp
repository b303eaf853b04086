#include "kernels/successor_prefetch.h"

namespace tandem::kernels {
namespace {

size_t Hash(const SuccessorPrefetch::Key& key) {
  // Matrices are at least cache-line aligned: drop those bits, then spread by a multiply.
  const uint64_t h =
      (reinterpret_cast<uintptr_t>(key.weights) >> 6) ^ (static_cast<uint64_t>(key.rows) << 40);
  return static_cast<size_t>((h * 0x9E3779B97F4A7C15u) >> 32);
}

}  // namespace

SuccessorPrefetch::Slot* SuccessorPrefetch::Find(const Key& key) {
  for (size_t i = Hash(key) % kSlots, n = 0; n < kSlots; i = (i + 1) % kSlots, ++n) {
    if (slots_[i].key == key) return &slots_[i];
    if (slots_[i].key.weights == nullptr) return nullptr;
  }
  return nullptr;
}

SuccessorPrefetch::Slot& SuccessorPrefetch::Insert(const Key& key) {
  if (used_ >= kSlots / 2) {
    for (Slot& slot : slots_) slot = Slot{};
    used_ = 0;
  }
  size_t i = Hash(key) % kSlots;
  while (slots_[i].key.weights != nullptr) i = (i + 1) % kSlots;
  ++used_;
  slots_[i].key = key;
  return slots_[i];
}

std::span<const ThreadPool::PrefetchRange> SuccessorPrefetch::Run(
    const Key& key, std::span<const ThreadPool::PrefetchRange> shares) {
  if (Slot* previous = previous_.weights != nullptr ? Find(previous_) : nullptr) {
    previous->next = key;
  }
  previous_ = key;
  Slot* slot = Find(key);
  if (slot == nullptr) slot = &Insert(key);
  slot->shares.assign(shares.begin(), shares.end());
  then_.clear();
  const Slot* next = slot->next.weights != nullptr ? Find(slot->next) : nullptr;
  if (next != nullptr && next->shares.size() == shares.size()) then_ = next->shares;
  return then_;
}

}  // namespace tandem::kernels
