// The bounded LRU map of stored responses.
#include "server/response_store.h"

#include <iterator>
#include <utility>

#include "base/error.h"

namespace tandem::server {

ResponseStore::ResponseStore(size_t max_count, size_t max_bytes)
    : max_count_(max_count), max_bytes_(max_bytes) {
  if (max_count == 0 || max_bytes == 0) {
    Fail(ErrorKind::kInvalidArgument, "a response store needs a count and a byte limit above 0");
  }
}

size_t ResponseStore::EntryBytes(const std::string& id, const StoredResponse& entry) {
  return id.size() + entry.response.size() + entry.conversation.size() + entry.owner.size();
}

void ResponseStore::EraseLocked(Order::iterator it) {
  bytes_ -= it->bytes;
  by_id_.erase(it->id);
  order_.erase(it);
}

bool ResponseStore::Put(const std::string& id, StoredResponse entry) {
  const size_t entry_bytes = EntryBytes(id, entry);
  if (entry_bytes > max_bytes_) return false;
  auto shared = std::make_shared<const StoredResponse>(std::move(entry));
  std::lock_guard<std::mutex> lock(mu_);
  if (auto found = by_id_.find(id); found != by_id_.end()) EraseLocked(found->second);
  order_.push_front({id, std::move(shared), entry_bytes});
  by_id_[id] = order_.begin();
  bytes_ += entry_bytes;
  // The new entry fits alone, so evicting from the back never reaches it.
  while (order_.size() > max_count_ || bytes_ > max_bytes_) EraseLocked(std::prev(order_.end()));
  return true;
}

std::shared_ptr<const StoredResponse> ResponseStore::Get(const std::string& id,
                                                         const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto found = by_id_.find(id);
  if (found == by_id_.end() || found->second->entry->owner != owner) return nullptr;
  order_.splice(order_.begin(), order_, found->second);
  return found->second->entry;
}

bool ResponseStore::Remove(const std::string& id, const std::string& owner) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto found = by_id_.find(id);
  if (found == by_id_.end() || found->second->entry->owner != owner) return false;
  EraseLocked(found->second);
  return true;
}

size_t ResponseStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return order_.size();
}

size_t ResponseStore::bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return bytes_;
}

}  // namespace tandem::server
