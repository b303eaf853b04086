// The responses tandem keeps for OpenAI's Responses API (`store`, `previous_response_id`,
// GET and DELETE /v1/responses/{id}): a bounded in-memory map from a response id to the response
// as it was returned and the conversation that led to it. Two limits bound it, a count and bytes;
// storing past either evicts the least recently used entries first, and a lookup makes an entry
// the most recently used. Entries are kept as serialized JSON, so their bytes are what they take
// (not an estimate of a parsed tree). Nothing survives a restart. Thread-safe: every generating
// request may store and look up at once. Each entry belongs to the API key that stored it (its
// owner, "" when none was presented): another key finds nothing under its id, as suffix drafting
// keeps each key's text apart.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace tandem::server {

// One stored response, as serialized JSON.
struct StoredResponse {
  std::string response;      // the response object as returned (GET /v1/responses/{id})
  std::string conversation;  // the input items of the whole chain, then this response's output
                             // items: what a request naming it as previous_response_id continues
  std::string owner;         // the API key that stored it ("" when none was presented)
};

class ResponseStore {
 public:
  // Both limits must be > 0 (a server without a store has no ResponseStore).
  ResponseStore(size_t max_count, size_t max_bytes);
  ResponseStore(const ResponseStore&) = delete;
  ResponseStore& operator=(const ResponseStore&) = delete;

  // Keeps `entry` under `id` (replacing an entry with that id) as the most recently used, then
  // evicts the least recently used others until both limits hold. An entry larger than
  // max_bytes() on its own is not kept and nothing else changes: returns false.
  bool Put(const std::string& id, StoredResponse entry);

  // The entry, made the most recently used; null when unknown (never stored, evicted, deleted)
  // or owned by another key than `owner`.
  std::shared_ptr<const StoredResponse> Get(const std::string& id, const std::string& owner);

  // Drops the entry; false when unknown or owned by another key than `owner`.
  bool Remove(const std::string& id, const std::string& owner);

  size_t size() const;   // entries held
  size_t bytes() const;  // their EntryBytes, summed
  size_t max_count() const { return max_count_; }
  size_t max_bytes() const { return max_bytes_; }

  // What an entry counts against max_bytes: its id, both serialized JSON texts and its owner.
  static size_t EntryBytes(const std::string& id, const StoredResponse& entry);

 private:
  struct Slot {
    std::string id;
    std::shared_ptr<const StoredResponse> entry;
    size_t bytes = 0;
  };
  using Order = std::list<Slot>;  // most recently used first

  void EraseLocked(Order::iterator it);

  const size_t max_count_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  Order order_;
  std::unordered_map<std::string, Order::iterator> by_id_;
  size_t bytes_ = 0;
};

}  // namespace tandem::server
