// Rank-ordered BPE over the UTF-8 characters of one word, with `<0xHH>` byte fallback.
#include "tokenizer/bpe_model.h"

#include <cstdio>
#include <queue>

#include "base/error.h"
#include "base/log.h"
#include "tokenizer/utf8.h"

namespace tandem {

BpeModel::BpeModel(const Vocab& vocab) : merges_(vocab.merges.size()), unk_id_(vocab.unk_id) {
  const auto [first, second] = index_.Build(vocab.tokens);
  if (first >= 0) {
    Fail(ErrorKind::kCorrupt, vocab.source + ": tokens " + std::to_string(first) + " and " +
                                  std::to_string(second) + " have the same text '" +
                                  vocab.tokens[second] + "'");
  }
  for (int b = 0; b < 128; ++b) {
    const char c = static_cast<char>(b);
    ascii_ids_[b] = Find(std::string_view(&c, 1));
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    byte_ids_[b] = Find(name);
  }
  size_t skipped = 0;
  for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
    std::string_view left_text;
    std::string_view right_text;
    if (!SplitMerge(vocab.merges[rank], &left_text, &right_text)) {
      ++skipped;
      continue;
    }
    const int32_t left = Find(left_text);
    const int32_t right = Find(right_text);
    const int32_t result = index_.FindConcat(left_text, right_text);
    if (left == kNoToken || right == kNoToken || result == kNoToken) {
      ++skipped;
      continue;
    }
    // A pair listed twice keeps its first (lowest) rank.
    merges_.Insert(left, right, {static_cast<int32_t>(rank), result});
  }
  if (skipped != 0) {
    LogWarn(vocab.source + ": " + std::to_string(skipped) + " of " +
            std::to_string(vocab.merges.size()) +
            " merges are malformed or name texts that are not tokens; they are ignored");
  }
}

void BpeModel::AppendBytes(std::string_view piece, std::vector<int32_t>& out) const {
  for (const char c : piece) {
    if (byte_ids_[static_cast<uint8_t>(c)] == kNoToken) {
      if (unk_id_ != kNoToken) out.push_back(unk_id_);
      return;
    }
  }
  for (const char c : piece) out.push_back(byte_ids_[static_cast<uint8_t>(c)]);
}

void BpeModel::EncodeWord(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (word.size() >= UINT32_MAX) {
    Fail(ErrorKind::kInvalidArgument, "tokenizer: a text piece of " + std::to_string(word.size()) +
                                          " bytes is too long to encode");
  }
  // Symbols form a doubly linked list in text order; a merge grows the left one and unlinks the
  // right one. A symbol's index is its first character's index, which orders ties.
  struct Symbol {
    int32_t id;      // token id of the symbol's text, or kNoToken (never merges)
    uint32_t start;  // byte offset in word
    uint32_t size;   // bytes; 0 once merged away
    int32_t prev;
    int32_t next;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  for (size_t pos = 0; pos < word.size();) {
    const auto lead = static_cast<uint8_t>(word[pos]);
    size_t len = 1;
    int32_t id = kNoToken;
    if (lead < 0x80) {
      id = ascii_ids_[lead];
    } else {
      len = Utf8SequenceLength(word, pos);
      if (len == 0) {
        len = 1;  // stray byte: its own symbol, never merged
      } else {
        id = Find(word.substr(pos, len));
      }
    }
    const auto index = static_cast<int32_t>(symbols.size());
    symbols.push_back(
        {id, static_cast<uint32_t>(pos), static_cast<uint32_t>(len), index - 1, index + 1});
    pos += len;
  }
  symbols.back().next = -1;

  struct Candidate {
    int32_t rank;
    int32_t left;  // symbol indices
    int32_t right;
    int32_t left_id;  // ids when pushed; the candidate is stale if either changed
    int32_t right_id;
    int32_t result;  // id of the merged text
  };
  const auto later = [](const Candidate& a, const Candidate& b) {
    return a.rank != b.rank ? a.rank > b.rank : a.left > b.left;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(later)> queue(later);
  const auto push_pair = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[left];
    const Symbol& r = symbols[right];
    if (l.id == kNoToken || r.id == kNoToken) return;
    if (const MergeTable::Merge* m = merges_.Find(l.id, r.id))
      queue.push({m->rank, left, right, l.id, r.id, m->result});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(symbols.size()); ++i) push_pair(i, i + 1);

  while (!queue.empty()) {
    const Candidate c = queue.top();
    queue.pop();
    Symbol& l = symbols[c.left];
    Symbol& r = symbols[c.right];
    if (l.size == 0 || r.size == 0 || l.next != c.right || l.id != c.left_id ||
        r.id != c.right_id) {
      continue;
    }
    l.id = c.result;
    l.size += r.size;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = c.left;
    r.size = 0;
    push_pair(l.prev, c.left);
    push_pair(c.left, l.next);
  }

  for (int32_t i = 0; i >= 0; i = symbols[i].next) {
    const Symbol& s = symbols[i];
    if (s.id != kNoToken) {
      out.push_back(s.id);
    } else {
      AppendBytes(word.substr(s.start, s.size), out);
    }
  }
}

}  // namespace tandem
