#include "speculative/suffix_index.h"

#include <algorithm>
#include <unordered_set>

#include "base/mix64.h"

namespace tandem {
namespace {

constexpr int kKeyLengths[] = {SuffixIndex::kLongKey, SuffixIndex::kShortKey};
// The most a token can add to the footprint: itself and one new key of each length.
constexpr size_t kTokenBytesMax = sizeof(int32_t) + 2 * SuffixIndex::kKeyBytes;

}  // namespace

SuffixIndex::SuffixIndex(size_t max_bytes) : max_bytes_(max_bytes) {}

// Hashes tokens[end - n, end) and n (the two key lengths share one map).
uint64_t SuffixIndex::KeyAt(std::span<const int32_t> tokens, size_t end, int n) {
  uint64_t h = Mix64(0x9E3779B97F4A7C15ull * static_cast<uint64_t>(n));
  for (int i = 1; i <= n; ++i) h = Mix64(h ^ static_cast<uint32_t>(tokens[end - i]));
  return h;
}

size_t SuffixIndex::TailThatFits(std::span<const int32_t> tokens, size_t budget) {
  // Grows the tail a token at a time from the end: each token adds itself and the keys whose
  // window starts at it (those with a next token inside the tail), once per distinct key.
  std::unordered_set<uint64_t> keys;
  size_t bytes = 0;
  for (size_t start = tokens.size(); start-- > 0;) {
    bytes += sizeof(int32_t);
    for (const int n : kKeyLengths) {
      const size_t end = start + static_cast<size_t>(n);
      if (end < tokens.size() && keys.insert(KeyAt(tokens, end, n)).second) bytes += kKeyBytes;
    }
    if (bytes > budget) return tokens.size() - start - 1;
  }
  return tokens.size();
}

size_t SuffixIndex::Footprint() const {
  return tokens_ * sizeof(int32_t) + keys_ * kKeyBytes + docs_.size() * kDocumentBytes +
         tenants_.size() * kTenantBytes + tenant_name_bytes_;
}

void SuffixIndex::Index(Tenant& tenant, uint32_t id, const std::vector<int32_t>& tokens) {
  // Every position with a next token, oldest first, so the newest occurrence ends up first.
  for (size_t end = kShortKey; end < tokens.size(); ++end) {
    for (const int n : kKeyLengths) {
      if (end < static_cast<size_t>(n)) continue;
      auto [it, fresh] = tenant.keys.try_emplace(KeyAt(tokens, end, n));
      if (fresh) ++keys_;
      Postings& ps = it->second;
      const int keep = std::min<int>(ps.n, kMaxPostings - 1);
      std::move_backward(ps.p, ps.p + keep, ps.p + keep + 1);
      ps.p[0] = Posting{id, static_cast<uint32_t>(end)};
      ps.n = static_cast<uint8_t>(keep + 1);
    }
  }
}

void SuffixIndex::Remove(uint32_t id) {
  const auto doc_it = docs_.find(id);
  if (doc_it == docs_.end()) return;
  Document& doc = doc_it->second;
  const auto tenant_it = tenants_.find(doc.tenant);
  Tenant& tenant = tenant_it->second;
  const std::vector<int32_t>& tokens = doc.tokens;
  for (size_t end = kShortKey; end < tokens.size(); ++end) {
    for (const int n : kKeyLengths) {
      if (end < static_cast<size_t>(n)) continue;
      const auto it = tenant.keys.find(KeyAt(tokens, end, n));
      if (it == tenant.keys.end()) continue;  // erased already (a repeat within the document)
      Postings& ps = it->second;
      const Posting* kept_end =
          std::remove_if(ps.p, ps.p + ps.n, [id](const Posting& p) { return p.doc == id; });
      ps.n = static_cast<uint8_t>(kept_end - ps.p);
      if (ps.n == 0) {
        tenant.keys.erase(it);
        --keys_;
      }
    }
  }
  tokens_ -= tokens.size();
  tenant_name_bytes_ -= doc.tenant.size();
  lru_.erase(doc.lru);
  std::erase(tenant.recent, id);
  if (--tenant.documents == 0) {
    tenant_name_bytes_ -= tenant_it->first.size();
    tenants_.erase(tenant_it);
  }
  docs_.erase(doc_it);
}

void SuffixIndex::Touch(Document& doc, uint32_t id) {
  lru_.erase(doc.lru);
  lru_.push_front(id);
  doc.lru = lru_.begin();
}

void SuffixIndex::EvictToLimit() {
  while (Footprint() > max_bytes_ && !lru_.empty()) {
    Remove(lru_.back());
    ++evicted_;
  }
}

void SuffixIndex::Add(std::string_view tenant_name, std::span<const int32_t> tokens) {
  // A document that may not fit an otherwise empty index keeps its last tokens that do.
  const size_t overhead = kDocumentBytes + kTenantBytes + 2 * tenant_name.size();
  if (max_bytes_ < overhead) return;
  if (tokens.size() * kTokenBytesMax > max_bytes_ - overhead) {
    tokens = tokens.last(TailThatFits(tokens, max_bytes_ - overhead));
  }
  if (tokens.size() < static_cast<size_t>(kShortKey) + 1) return;

  std::lock_guard<std::mutex> lock(mutex_);
  auto [tenant_it, fresh] = tenants_.try_emplace(std::string(tenant_name));
  if (fresh) tenant_name_bytes_ += tenant_name.size();
  Tenant& tenant = tenant_it->second;
  // A document the new one extends (all of it but perhaps its last token, the end-of-turn the
  // next prompt may render differently) says nothing the new one does not.
  std::vector<uint32_t> extended;
  for (const uint32_t old : tenant.recent) {
    const std::vector<int32_t>& t = docs_.at(old).tokens;
    if (t.size() <= tokens.size() + 1 && std::equal(t.begin(), t.end() - 1, tokens.begin())) {
      extended.push_back(old);
    }
  }
  // Removing the last document of the tenant would drop the tenant itself: add the new one first.
  uint32_t id = next_id_++;
  while (docs_.contains(id)) id = next_id_++;
  Document& doc = docs_[id];
  doc.tenant = std::string(tenant_name);
  doc.tokens.assign(tokens.begin(), tokens.end());
  lru_.push_front(id);
  doc.lru = lru_.begin();
  tenant_name_bytes_ += doc.tenant.size();
  tokens_ += doc.tokens.size();
  ++tenant.documents;
  tenant.recent.push_back(id);
  if (tenant.recent.size() > kExtendCheck) tenant.recent.erase(tenant.recent.begin());
  Index(tenant, id, doc.tokens);
  ++added_;
  for (const uint32_t old : extended) {
    Remove(old);
    ++replaced_;
  }
  EvictToLimit();
}

SuffixIndex::Proposal SuffixIndex::Propose(std::string_view tenant_name,
                                           std::span<const int32_t> context, int n_max) {
  Proposal out;
  if (n_max <= 0 || context.size() < static_cast<size_t>(kShortKey)) return out;
  std::lock_guard<std::mutex> lock(mutex_);
  const auto tenant_it = tenants_.find(tenant_name);
  if (tenant_it == tenants_.end()) return out;
  const Tenant& tenant = tenant_it->second;
  const size_t size = context.size();
  Document* best = nullptr;
  uint32_t best_id = 0, best_end = 0;
  for (const int n : kKeyLengths) {
    if (size < static_cast<size_t>(n)) continue;
    const auto it = tenant.keys.find(KeyAt(context, size, n));
    if (it == tenant.keys.end()) continue;
    const Postings& ps = it->second;
    for (int k = 0; k < ps.n; ++k) {  // newest first: a tie keeps the newer
      const Posting p = ps.p[k];
      Document& doc = docs_.at(p.doc);
      if (doc.tenant != tenant_name || p.end >= doc.tokens.size()) continue;  // never the case
      int match = 0;
      const int most = static_cast<int>(std::min<size_t>({kMaxMatch, p.end, size}));
      while (match < most && doc.tokens[p.end - 1 - match] == context[size - 1 - match]) ++match;
      if (match < n || match <= out.match) continue;  // a hash collision, or not longer
      out.match = match;
      best = &doc;
      best_id = p.doc;
      best_end = p.end;
    }
  }
  if (best == nullptr) return out;
  const size_t stop = std::min(best->tokens.size(), best_end + static_cast<size_t>(n_max));
  out.tokens.assign(best->tokens.begin() + best_end, best->tokens.begin() + stop);
  Touch(*best, best_id);
  return out;
}

SuffixIndex::Stats SuffixIndex::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Stats s;
  s.bytes = Footprint();
  s.documents = docs_.size();
  s.tenants = tenants_.size();
  s.tokens = tokens_;
  s.added = added_;
  s.evicted = evicted_;
  s.replaced = replaced_;
  return s;
}

}  // namespace tandem
