// The Gemma 4 MTP assistant (arch gemma4-assistant): a 4-layer Q-only decoder that drafts from
// the target's hidden state and attends the target's own KV cache (docs/mtp.md § Architecture).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/ops.h"
#include "kv/kv_cache.h"
#include "model/gemma4/config.h"
#include "model/gemma4/decoder_blocks.h"
#include "model/gemma4/target.h"
#include "model/gemma4/weights.h"

namespace tandem {

class GgufFile;
class ThreadPool;

// Which LM head the assistant drafts through.
enum class DraftHead {
  kAuto,      // centroid head when the file has one, else dense
  kCentroid,  // score clusters, keep the top-k, logits only for their tokens
  kDense,     // the tied embedding over the whole vocabulary
};

// One draft step of one sequence: extend `token` (at query position `pos`, held constant within a
// draft block) from `hidden` [B]: the target's post-final-norm hidden of the row that produced
// `token`, or the previous step's post-projection output.
struct DraftRow {
  int32_t token = 0;
  int32_t pos = 0;
  int32_t seq = 0;
  const float* hidden = nullptr;
};

struct DraftOutput {
  int n_vocab = 0;
  int n_embd_out = 0;
  std::vector<float> logits;  // [rows][V]; tokens outside the kept clusters are -inf
  std::vector<float> hidden;  // [rows][B]: next step's hidden (post_projection)
  // Step's working memory, kept here so a drafting loop that reuses its DraftOutput allocates
  // nothing per step.
  struct Scratch : BlockScratch {
    std::vector<int32_t> positions, order, candidates;
    std::vector<float> in, x, y, scores, values;
  } scratch;
  const float* Logits(int r) const { return logits.data() + static_cast<size_t>(r) * n_vocab; }
  const float* Hidden(int r) const { return hidden.data() + static_cast<size_t>(r) * n_embd_out; }
  // Row r's output-normed state (the head's input, [n_embd]), valid until the next Step.
  const float* Normed(int r, int n_embd) const {
    return scratch.y.data() + static_cast<size_t>(r) * n_embd;
  }
};

class Gemma4Assistant {
 public:
  // Loads `path` and pairs it with `target`: identical vocabulary (token texts), target hidden
  // size == embedding_length_out, the target ending in a sliding then a full layer, head dims and
  // KV heads that match the target layers read. Throws Error naming what differs.
  // `options.repack`: its matrices repacked as the target's are (Gemma4Weights::Pack).
  static std::unique_ptr<Gemma4Assistant> Load(const std::string& path, const Gemma4Model& target,
                                               DraftHead head = DraftHead::kAuto,
                                               const Gemma4Model::LoadOptions& options = {});
  ~Gemma4Assistant();

  const Gemma4Config& config() const { return config_; }
  const Gemma4Weights& weights() const { return weights_; }
  int n_embd_out() const { return n_embd_out_; }
  bool has_centroids() const { return n_centroids_ > 0; }
  bool uses_centroids() const { return use_centroids_; }
  int n_centroids() const { return n_centroids_; }
  int centroid_top_k() const { return centroid_top_k_; }
  // Bytes of weights one draft step reads (the centroid head reads only the kept clusters' rows).
  double BytesPerStep() const;
  // Target layer (a KV-owning one) whose cache assistant layer `l` reads.
  int target_kv_layer(int l) const { return kv_layer_[l]; }

  // One draft step for every row (one row per sequence). Reads the target's cache positions
  // [pos - window + 1, pos) (sliding layers) or [0, pos) (full layer) of each row's sequence.
  // Rows are independent: each row's result is bitwise the same whatever the other rows.
  void Step(const std::vector<DraftRow>& rows, const KvCache& target_cache, DraftOutput& out,
            ThreadPool& pool) const;

  // Logits of the dense head for output-normed states y [n][D] (tests compare heads with it).
  void DenseLogits(const float* y, int n, float* logits, ThreadPool& pool) const;
  // The dense head's logits of tokens `ids` only, for one output-normed state y [D] (bitwise the
  // values DenseLogits gives them): a centroid head that kept none of the tokens a constraint
  // allows scores those.
  void TokenLogits(const float* y, std::span<const int32_t> ids, float* values,
                   ThreadPool& pool) const;

 private:
  explicit Gemma4Assistant(const Gemma4Model& target);
  void Head(const float* y, float* logits, DraftOutput::Scratch& s, ThreadPool& pool) const;

  const Gemma4Model& target_;
  std::unique_ptr<GgufFile> file_;
  Gemma4Config config_;
  Gemma4Weights weights_;  // the body: token_embd (tied head), output_norm, layers, rope_freqs
  kernels::WeightMatrix pre_projection_;   // [D][2B]
  kernels::WeightMatrix post_projection_;  // [B][D]
  kernels::WeightMatrix centroids_;        // [C][D]
  std::vector<int32_t> ordering_;          // [C][V/C] token ids of each cluster
  int n_embd_out_ = 0;
  int n_centroids_ = 0;
  int centroid_top_k_ = 0;
  bool use_centroids_ = false;
  std::vector<int> kv_layer_;
  std::vector<kernels::Rope> rope_;
};

}  // namespace tandem
