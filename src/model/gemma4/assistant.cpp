#include "model/gemma4/assistant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>

#include "base/error.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "gguf/gguf_reader.h"
#include "kernels/attention.h"
#include "kernels/matmul.h"
#include "kernels/tensor_binder.h"
#include "model/gemma4/decoder_blocks.h"
#include "model/vocabulary_check.h"
#include "tensor/type_traits.h"

namespace tandem {

using kernels::MatMul;

namespace {

constexpr const char* kArch = "gemma4-assistant";
constexpr int kDefaultCentroidTopK = 32;

[[noreturn]] void Mismatch(const std::string& path, const std::string& what) {
  Fail(ErrorKind::kInvalidArgument, path + ": assistant does not fit the target: " + what);
}

}  // namespace

Gemma4Assistant::Gemma4Assistant(const Gemma4Model& target) : target_(target) {}
Gemma4Assistant::~Gemma4Assistant() = default;

std::unique_ptr<Gemma4Assistant> Gemma4Assistant::Load(const std::string& path,
                                                       const Gemma4Model& target, DraftHead head,
                                                       const Gemma4Model::LoadOptions& options) {
  std::unique_ptr<Gemma4Assistant> a(new Gemma4Assistant(target));
  a->file_ = GgufFile::Open(path);
  const GgufFile& f = *a->file_;
  a->config_ = Gemma4Config::FromGguf(f, kArch);
  const Gemma4Config& c = a->config_;
  const Gemma4Config& tc = target.config();
  a->n_embd_out_ = static_cast<int>(f.GetU32(std::string(kArch) + ".embedding_length_out"));
  const uint64_t D = c.n_embd, B = a->n_embd_out_, V = c.n_vocab;
  a->weights_ = Gemma4Weights::Bind(f, c,
                                    {"nextn.pre_projection.weight", "nextn.post_projection.weight",
                                     "masked_embd_centroids.weight", "masked_embd_ordering"});
  const TensorBinder b(f);
  a->pre_projection_ = b.Matrix(*b.Find("nextn.pre_projection.weight", {2 * B, D}));
  a->post_projection_ = b.Matrix(*b.Find("nextn.post_projection.weight", {D, B}));

  // Centroid ("masked embedding") head of the E2B/E4B assistants.
  if (const TensorInfo* ct = f.FindTensor("masked_embd_centroids.weight")) {
    const uint64_t C = ct->ne[1];
    if (C == 0 || V % C != 0) {
      Fail(ErrorKind::kInvalidArgument, path + ": " + std::to_string(C) +
                                            " centroids do not divide the vocabulary of " +
                                            std::to_string(V));
    }
    a->centroids_ = b.Matrix(*b.Find("masked_embd_centroids.weight", {D, C}));
    const TensorInfo& ot = *b.Find("masked_embd_ordering", {V});
    if (ot.type != TensorType::kI32) {
      Fail(ErrorKind::kInvalidArgument, path + ": tensor 'masked_embd_ordering' has type " +
                                            std::string(TensorTypeName(ot.type)) +
                                            ", expected i32");
    }
    a->ordering_.resize(V);
    std::memcpy(a->ordering_.data(), f.TensorData(ot), V * sizeof(int32_t));
    std::vector<uint8_t> seen(V, 0);
    for (int32_t id : a->ordering_) {
      if (id < 0 || static_cast<uint64_t>(id) >= V || seen[id]++) {
        Fail(ErrorKind::kInvalidArgument,
             path + ": masked_embd_ordering is not a permutation of the vocabulary (id " +
                 std::to_string(id) + ")");
      }
    }
    a->n_centroids_ = static_cast<int>(C);
    if (auto n = f.FindU32(std::string(kArch) + ".num_centroids"); n && *n != C) {
      Fail(ErrorKind::kInvalidArgument, path + ": num_centroids is " + std::to_string(*n) +
                                            " but the centroid tensor has " + std::to_string(C));
    }
    int top_k = kDefaultCentroidTopK;
    if (auto k = f.FindU32(std::string(kArch) + ".centroid_intermediate_top_k")) {
      top_k = static_cast<int>(*k);
    }
    a->centroid_top_k_ = std::clamp(top_k, 1, a->n_centroids_);
  }
  if (head == DraftHead::kCentroid && a->n_centroids_ == 0) {
    Fail(ErrorKind::kInvalidArgument,
         path + ": --draft-head centroid asked for, but the assistant has no centroid tensors");
  }
  a->use_centroids_ = a->n_centroids_ > 0 && head != DraftHead::kDense;

  // Pairing with the target.
  CheckSameVocabulary(f, c.n_vocab, target.file(), tc.n_vocab, "assistant");
  if (tc.n_embd != a->n_embd_out_) {
    Mismatch(path, "embedding_length_out " + std::to_string(a->n_embd_out_) +
                       " != target hidden size " + std::to_string(tc.n_embd));
  }
  const int L = tc.n_layer;
  if (L < 2 || !tc.layers[L - 2].sliding || tc.layers[L - 1].sliding) {
    Mismatch(path, "the target must end in a sliding then a full attention layer");
  }
  for (int l = 0; l < c.n_layer; ++l) {
    const Gemma4LayerConfig& lc = c.layers[l];
    const int src = tc.layers[lc.sliding ? L - 2 : L - 1].kv_source;
    const Gemma4LayerConfig& tl = tc.layers[src];
    if (tl.head_dim != lc.head_dim) {
      Mismatch(path, "layer " + std::to_string(l) + " head dim " + std::to_string(lc.head_dim) +
                         " != target layer " + std::to_string(src) + " head dim " +
                         std::to_string(tl.head_dim));
    }
    if (c.n_head % tl.n_head_kv != 0) {
      Mismatch(path, "layer " + std::to_string(l) + ": " + std::to_string(c.n_head) +
                         " query heads over the target's " + std::to_string(tl.n_head_kv) +
                         " KV heads");
    }
    a->kv_layer_.push_back(src);
    a->rope_.push_back(lc.sliding ? kernels::Rope::Neox(lc.head_dim, lc.n_rot, lc.rope_base)
                                  : kernels::Rope::Neox(lc.head_dim, lc.n_rot, lc.rope_base,
                                                        a->weights_.rope_freqs));
  }
  // Drafting is a chain of one-row forwards through these matrices, which read the repacked
  // layout faster than the file's (the same bits; bench/README.md § Kernel choices).
  if (options.repack) {
    a->weights_.Pack({&a->pre_projection_, &a->post_projection_, &a->centroids_});
  }
  return a;
}

double Gemma4Assistant::BytesPerStep() const {
  double bytes = 0;
  for (const TensorInfo& t : file_->tensors()) {
    double b = static_cast<double>(t.nbytes);
    if (t.name == "token_embd.weight" && use_centroids_)
      b *= double(centroid_top_k_) / n_centroids_;
    if (t.name == "masked_embd_centroids.weight" && !use_centroids_) b = 0;
    bytes += b;
  }
  return bytes;
}

void Gemma4Assistant::DenseLogits(const float* y, int n, float* logits, ThreadPool& pool) const {
  MatMul(weights_.output, y, n, logits, pool);
}

void Gemma4Assistant::TokenLogits(const float* y, std::span<const int32_t> ids, float* values,
                                  ThreadPool& pool) const {
  kernels::MatMulRows(weights_.output, ids.data(), static_cast<int64_t>(ids.size()), y, 1, values,
                      pool);
}

void Gemma4Assistant::Head(const float* y, float* logits, DraftOutput::Scratch& s,
                           ThreadPool& pool) const {
  if (!use_centroids_) {
    MatMul(weights_.output, y, 1, logits, pool);
    return;
  }
  // Score the clusters, keep the top-k (ties: lower index), compute only their tokens' logits.
  const int C = n_centroids_, K = centroid_top_k_, per = config_.n_vocab / C;
  s.scores.resize(C);
  MatMul(centroids_, y, 1, s.scores.data(), pool);
  s.order.resize(C);
  std::iota(s.order.begin(), s.order.end(), 0);
  const std::vector<float>& scores = s.scores;
  std::partial_sort(s.order.begin(), s.order.begin() + K, s.order.end(), [&scores](int a, int b) {
    return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
  });
  s.candidates.resize(static_cast<size_t>(K) * per);
  for (int k = 0; k < K; ++k) {
    std::memcpy(s.candidates.data() + static_cast<size_t>(k) * per,
                ordering_.data() + static_cast<size_t>(s.order[k]) * per, per * sizeof(int32_t));
  }
  s.values.resize(s.candidates.size());
  kernels::MatMulRows(weights_.output, s.candidates.data(),
                      static_cast<int64_t>(s.candidates.size()), y, 1, s.values.data(), pool);
  std::fill(logits, logits + config_.n_vocab, -INFINITY);
  for (size_t i = 0; i < s.candidates.size(); ++i) logits[s.candidates[i]] = s.values[i];
}

void Gemma4Assistant::Step(const std::vector<DraftRow>& rows, const KvCache& target_cache,
                           DraftOutput& out, ThreadPool& pool) const {
  const Gemma4Config& c = config_;
  const int n = static_cast<int>(rows.size());
  const size_t B = n_embd_out_, D = c.n_embd;
  DraftOutput::Scratch& s = out.scratch;
  s.positions.resize(n);
  s.in.resize(n * 2 * B);
  s.x.resize(n * D);  // the residual stream
  for (int r = 0; r < n; ++r) {
    if (rows[r].pos < 0 || rows[r].pos > target_cache.Length(rows[r].seq)) {
      Fail(ErrorKind::kInvalidArgument, "draft row " + std::to_string(r) + " at position " +
                                            std::to_string(rows[r].pos) +
                                            " is past the target cache of length " +
                                            std::to_string(target_cache.Length(rows[r].seq)));
    }
    s.positions[r] = rows[r].pos;
    // x = W_pre · [E_target[token] · sqrt(B) ; hidden], embedding first.
    target_.EmbedToken(rows[r].token, s.in.data() + r * 2 * B);
    std::memcpy(s.in.data() + r * 2 * B + B, rows[r].hidden, B * sizeof(float));
  }
  MatMul(pre_projection_, s.in.data(), n, s.x.data(), pool);

  for (int l = 0; l < c.n_layer; ++l) {
    const Gemma4LayerConfig& lc = c.layers[l];
    const DecoderLayer layer{c, lc, weights_.layers[l], rope_[l]};
    const size_t qd = static_cast<size_t>(c.n_head) * lc.head_dim;
    AttentionBlock(layer, n, s.positions.data(), s.x.data(), s, pool, {}, [&] {
      for (int r = 0; r < n; ++r) {
        // The target's committed positions before the query: all of them (full layer) or the
        // window ending at the query position (sliding layers).
        const int32_t p = rows[r].pos;
        kernels::KeyRange keys{lc.sliding ? std::max(0, p - c.sliding_window + 1) : 0, p};
        kernels::AttentionArgs args;
        args.n_rows = 1;
        args.n_heads = c.n_head;
        args.q = s.q.data() + r * qd;
        args.q_row_stride = qd;
        args.out = s.att.data() + r * qd;
        args.out_row_stride = qd;
        args.key_ranges = &keys;
        args.kv = target_cache.View(kv_layer_[l], rows[r].seq);
        args.scale = 1.0f;
        kernels::Attention(args, &pool);
      }
    });
    FfnBlock(layer, n, s.x.data(), s, pool);
    kernels::Scale(s.x.data(), layer.weights.output_scale, n * D, s.x.data());
  }

  s.y.resize(n * D);
  RowNorm(c.rms_eps, pool).Apply(weights_.output_norm, s.x.data(), n, s.y.data());
  out.n_vocab = c.n_vocab;
  out.n_embd_out = n_embd_out_;
  out.logits.resize(static_cast<size_t>(n) * c.n_vocab);
  out.hidden.resize(n * B);
  for (int r = 0; r < n; ++r)
    Head(s.y.data() + r * D, out.logits.data() + static_cast<size_t>(r) * c.n_vocab, s, pool);
  MatMul(post_projection_, s.y.data(), n, out.hidden.data(), pool);
}

}  // namespace tandem
