// Suffix drafting's memory of earlier requests: a bounded, thread-safe index over the token text
// (prompt and output) of recent requests, kept apart per tenant. Given the end of a request's
// context, it proposes what followed the same tokens in the tenant's earlier text, so an agent
// loop that repeats a tool call or re-emits a file with an edit drafts it from the request that
// wrote it first (prompt lookup, NgramIndex, sees only the current context).
//
// Layout: each document (one request's tokens) is stored whole; per tenant, a hash of the
// kShortKey and of the kLongKey tokens ending at each position that has a next token maps to
// its most recent occurrences (at most kMaxPostings, newest first). A query looks up the long
// key, then the short one, verifies each candidate token by token, measures how far back it
// matches (up to kMaxMatch), and proposes the continuation of the longest match (ties: the most
// recent). The long key keeps a long match findable where a frequent short n-gram's postings
// hold only its latest occurrences.
//
// Bounds: the estimated footprint (the tokens, every key's share of a hash node and its
// postings, each document's and tenant's bookkeeping: Footprint()) stays within max_bytes by
// evicting whole documents, least recently used first (adding a document or proposing from it
// uses it). A document that could not fit alone keeps its last tokens that do. A new document that
// extends one of its tenant's last few documents (the next turn of a conversation: its prompt
// holds the last turn's prompt and output) replaces it.
//
// Isolation: a query reads only its own tenant's keys and documents; no proposal ever contains
// another tenant's tokens. The tenant is a string the caller chooses (the server: the API key a
// request presents; docs/mtp.md § Suffix drafting).
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tandem {

class SuffixIndex {
 public:
  static constexpr int kShortKey = 4;     // the shortest match proposed from
  static constexpr int kLongKey = 12;     // a second key: long matches stay findable
  static constexpr int kMaxMatch = 64;    // matches are measured up to this many tokens
  static constexpr int kMaxPostings = 6;  // occurrences kept per key, the newest
  // Estimated bytes of one key (hash node, bucket, postings), of one document's and one
  // tenant's bookkeeping beyond their tokens and name.
  static constexpr size_t kKeyBytes = 96;
  static constexpr size_t kDocumentBytes = 128;
  static constexpr size_t kTenantBytes = 256;
  // Documents of the tenant checked for being extended by a new one.
  static constexpr size_t kExtendCheck = 8;

  // max_bytes: the footprint limit (0: nothing is kept).
  explicit SuffixIndex(size_t max_bytes);

  // Adds one request's tokens for `tenant`; evicts what the limit needs. Documents shorter
  // than kShortKey + 1 tokens are not kept (nothing to propose from them).
  void Add(std::string_view tenant, std::span<const int32_t> tokens);

  struct Proposal {
    std::vector<int32_t> tokens;  // up to n_max tokens continuing the context
    int match = 0;                // the context suffix they follow (0: none found)
  };
  // The continuation, in `tenant`'s documents, of the longest suffix of `context` (at least
  // kShortKey tokens) found there: up to n_max tokens (fewer where the document ends).
  Proposal Propose(std::string_view tenant, std::span<const int32_t> context, int n_max);

  struct Stats {
    size_t bytes = 0;  // Footprint()
    size_t documents = 0, tenants = 0, tokens = 0;
    int64_t added = 0, evicted = 0, replaced = 0;
  };
  Stats stats() const;
  size_t max_bytes() const { return max_bytes_; }

 private:
  struct Posting {
    uint32_t doc = 0;  // document id
    uint32_t end = 0;  // the key's tokens end here (tokens[end] is the next one)
  };
  struct Postings {
    Posting p[kMaxPostings];
    uint8_t n = 0;
  };
  struct Tenant {
    std::unordered_map<uint64_t, Postings> keys;  // both key lengths
    std::vector<uint32_t> recent;                 // its last documents, oldest first
    size_t documents = 0;
  };
  struct Document {
    std::string tenant;
    std::vector<int32_t> tokens;
    std::list<uint32_t>::iterator lru;
  };
  using TenantMap = std::map<std::string, Tenant, std::less<>>;

  static uint64_t KeyAt(std::span<const int32_t> tokens, size_t end, int n);
  // The most last tokens of `tokens` whose tokens and keys take at most `budget` bytes.
  static size_t TailThatFits(std::span<const int32_t> tokens, size_t budget);
  size_t Footprint() const;
  void Index(Tenant& tenant, uint32_t id, const std::vector<int32_t>& tokens);
  void Remove(uint32_t id);
  void Touch(Document& doc, uint32_t id);
  void EvictToLimit();

  const size_t max_bytes_;
  mutable std::mutex mutex_;
  TenantMap tenants_;
  std::unordered_map<uint32_t, Document> docs_;
  std::list<uint32_t> lru_;  // front: the most recently used
  uint32_t next_id_ = 0;
  size_t tokens_ = 0, keys_ = 0, tenant_name_bytes_ = 0;
  int64_t added_ = 0, evicted_ = 0, replaced_ = 0;
};

}  // namespace tandem
