#include "multimodal/media_cache.h"

#include <cstring>

namespace tandem {

uint64_t HashBytes(const void* data, size_t n, uint64_t h) {
  const auto* p = static_cast<const uint8_t*>(data);
  auto mix = [&](uint64_t w) {
    h ^= w + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
  };
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    mix(w);
  }
  uint64_t tail = n;
  for (; i < n; ++i) tail = (tail << 8) | p[i];
  mix(tail);
  return h;
}

MediaRowCache::Rows MediaRowCache::Find(uint64_t key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void MediaRowCache::Keep(uint64_t key, Rows rows) {
  std::lock_guard<std::mutex> lock(mu_);
  ++encodes_;
  if (by_key_.count(key) || capacity_ <= 0) return;
  lru_.emplace_front(key, std::move(rows));
  by_key_[key] = lru_.begin();
  while (static_cast<int>(lru_.size()) > capacity_) {
    by_key_.erase(lru_.back().first);
    lru_.pop_back();
  }
}

uint64_t MediaRowCache::encodes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return encodes_;
}

}  // namespace tandem
