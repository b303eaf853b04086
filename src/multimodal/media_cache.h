// Encoded media kept by content key, shared by image and audio input: the soft-token rows of the
// most recently used items (a bounded count), so that an item sent again costs no encode; and the
// content hash the keys are made with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tandem {

// A 64-bit hash over whole words (a multiply-xorshift per word): an image's prepared pixels or a
// recording's features are megabytes, hashed on a request thread.
uint64_t HashBytes(const void* data, size_t n, uint64_t seed);

class MediaRowCache {
 public:
  using Rows = std::shared_ptr<const std::vector<float>>;

  // Keeps the rows of at most `capacity` items (0: none).
  explicit MediaRowCache(int capacity) : capacity_(capacity) {}

  // Any thread. The rows under `key` (now the most recently used), or null.
  Rows Find(uint64_t key);
  // Records an encode and keeps its rows, dropping the least recently used beyond the capacity.
  void Keep(uint64_t key, Rows rows);
  // Encodes recorded so far.
  uint64_t encodes() const;

 private:
  const int capacity_;
  mutable std::mutex mu_;
  std::list<std::pair<uint64_t, Rows>> lru_;
  std::unordered_map<uint64_t, decltype(lru_)::iterator> by_key_;
  uint64_t encodes_ = 0;
};

}  // namespace tandem
