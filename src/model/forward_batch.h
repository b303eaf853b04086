// What one forward call evaluates, and what it returns: rows of (token or embedding, position,
// sequence), with logits for the rows asked for and the post-final-norm hidden state of every row.
// A prompt's media (an image's soft tokens) enter as embedding rows; generated rows are tokens.
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
  // Per row: null for a token row, or the row's input embedding (n_embd floats, owned by the
  // caller, alive until Forward returns): used as it is, not scaled; the row's token is the pad id
  // 0, whose per-layer embedding it takes (docs/gemma4.md § Media rows).
  std::vector<const float*> embeddings;
  // Per row: the last position the row attends to. Its own position (causal), or for a row of an
  // image attended bidirectionally the image's last position, which must be in the same batch
  // (TargetModel::MediaBidirectional says on which layers).
  std::vector<int32_t> sees_until;
  // Per row: 0, or how many rows back its parent in a draft tree is (an earlier token row of the
  // same sequence; docs/mtp.md § Draft trees). A tree row stands at the position after its
  // parent's (RoPE, visibility) and sees its ancestors' keys in order and not the rows between
  // them, as a row of a linear draft of its path would; its K/V is stored at `positions`, its
  // place among the batch's rows.
  std::vector<int32_t> tree_parent_offset;

  int size() const { return static_cast<int>(tokens.size()); }
  void Add(int32_t token, int32_t position, int32_t seq, bool logits,
           std::vector<int32_t> only = {}) {
    tokens.push_back(token);
    positions.push_back(position);
    seqs.push_back(seq);
    want_logits.push_back(logits ? 1 : 0);
    logit_tokens.push_back(std::move(only));
    embeddings.push_back(nullptr);
    sees_until.push_back(position);
    tree_parent_offset.push_back(0);
  }
  // Makes the last row a draft tree row whose parent is batch row `parent`.
  void SetTreeParent(int parent) { tree_parent_offset.back() = size() - 1 - parent; }
  void AddEmbedding(const float* embedding, int32_t position, int32_t seq, int32_t last_seen,
                    bool logits) {
    Add(0, position, seq, logits);
    embeddings.back() = embedding;
    sees_until.back() = last_seen;
  }
  // Appends row r of `from`, whatever its kind.
  void AddRowOf(const ForwardBatch& from, int r) {
    Add(from.tokens[r], from.positions[r], from.seqs[r], from.want_logits[r] != 0,
        from.logit_tokens[r]);
    embeddings.back() = from.embeddings[r];
    sees_until.back() = from.sees_until[r];
    tree_parent_offset.back() = from.tree_parent_offset[r];
  }
  void Clear() {
    tokens.clear();
    positions.clear();
    seqs.clear();
    want_logits.clear();
    logit_tokens.clear();
    embeddings.clear();
    sees_until.clear();
    tree_parent_offset.clear();
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
