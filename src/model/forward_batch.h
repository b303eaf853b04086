// What one forward call evaluates, and what it returns: rows of (token, position, sequence), with
// logits for the rows asked for and the post-final-norm hidden state of every row.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace tandem {

struct ForwardBatch {
  std::vector<int32_t> tokens;
  std::vector<int32_t> positions;  // absolute, 0-based
  std::vector<int32_t> seqs;       // KV-cache sequence of each row
  std::vector<uint8_t> want_logits;
  // Per row: the only tokens whose logits are wanted (a grammar's allowed set), the rest of the
  // row then -inf, as the grammar's mask would leave it; empty: every token. The head then reads
  // only those rows (the same bits as the full product).
  std::vector<std::vector<int32_t>> logit_tokens;

  int size() const { return static_cast<int>(tokens.size()); }
  void Add(int32_t token, int32_t position, int32_t seq, bool logits,
           std::vector<int32_t> only = {}) {
    tokens.push_back(token);
    positions.push_back(position);
    seqs.push_back(seq);
    want_logits.push_back(logits ? 1 : 0);
    logit_tokens.push_back(std::move(only));
  }
  void Clear() {
    tokens.clear();
    positions.clear();
    seqs.clear();
    want_logits.clear();
    logit_tokens.clear();
  }
};

struct ForwardOutput {
  int n_vocab = 0;
  int n_embd = 0;
  std::vector<int32_t> logit_rows;  // batch row of each logits row, in batch order
  std::vector<float> logits;        // [logit_rows.size()][n_vocab], soft-capped
  std::vector<float> hidden;        // [batch size][n_embd], after the final norm

  const float* Logits(int i) const { return logits.data() + static_cast<size_t>(i) * n_vocab; }
  const float* Hidden(int row) const { return hidden.data() + static_cast<size_t>(row) * n_embd; }
};

}  // namespace tandem
