#include "model/gemma4/target.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "base/error.h"
#include "base/thread_pool.h"
#include "gguf/gguf_reader.h"
#include "kernels/attention.h"
#include "model/gemma4/decoder_blocks.h"

namespace tandem {

using kernels::MatMul;

// Activations of one forward call beyond the blocks' (a, q, att, o, gate, up), T rows.
struct Gemma4Model::Scratch : BlockScratch {
  ActivationBuffer x;         // [T][D] residual stream
  ActivationBuffer k, v;      // [T][Hkv*hd]
  ActivationBuffer f;         // [T][D] MoE branch output
  ActivationBuffer ple;       // [T][L*P] per-layer inputs
  ActivationBuffer ple_proj;  // [T][L*P]
  ActivationBuffer ple_gate;  // [T][P]
  // [layer][T][n_rot]: the rows' rotations (Rope::Angles), for the layers l that
  // rope_angles_from_[l] names.
  std::vector<std::vector<float>> rope_angles;
  // The position each row stands at (its batch position, or a draft tree row's: its parent's
  // plus one), and per tree row its path of stored positions from the tree's root and the
  // remap that reads it (ForwardBatch::tree_parent_offset).
  std::vector<int32_t> stands_at;
  std::vector<std::vector<int32_t>> tree_paths;
  std::vector<kernels::KeyRemap> remaps;
  bool tree = false;

  // After a forward of `rows` (> BlockScratch::kShrinkAbove) rows: each buffer cut back to
  // BlockScratch::kMinRows rows (ShrinkRows). A buffer of 2 MiB or more leaves the address space
  // at once (base/huge_page_allocator.h); the next prefill maps it again in huge pages. The
  // rotation tables are freed (the next forward computes its own).
  void Shrink(int rows);
  // BlockScratch::Buffers and these.
  std::vector<ActivationBuffer*> Buffers() {
    std::vector<ActivationBuffer*> all = BlockScratch::Buffers();
    all.insert(all.end(), {&x, &k, &v, &f, &ple, &ple_proj, &ple_gate});
    return all;
  }
};

namespace {

// Logits rows ForwardOutput::logits makes room for when it first grows: a default round's
// verification (16 drafts and the token after them).
constexpr size_t kLogitRowsKept = 17;

}  // namespace

size_t Gemma4Model::ScratchBytes() const {
  std::lock_guard<std::mutex> lock(scratch_mu_);
  if (!scratch_) return 0;
  size_t floats = 0;
  for (const ActivationBuffer* b : scratch_->Buffers()) floats += b->size();
  return floats * sizeof(float);
}

void Gemma4Model::Scratch::Shrink(int rows) {
  for (ActivationBuffer* buffer : Buffers()) ShrinkRows(*buffer, rows);
  for (std::vector<float>& angles : rope_angles) std::vector<float>().swap(angles);
}

namespace {

// y[i] += x[i] over T rows of n.
void AddInPlace(float* y, const float* x, size_t n) {
  kernels::Add(y, x, static_cast<int64_t>(n), y);
}

}  // namespace

Gemma4Model::Gemma4Model() = default;
Gemma4Model::~Gemma4Model() = default;

std::unique_ptr<Gemma4Model> Gemma4Model::Load(const std::string& path,
                                               const LoadOptions& options) {
  std::unique_ptr<Gemma4Model> m(new Gemma4Model());
  m->file_ = GgufFile::Open(path);
  m->config_ = Gemma4Config::FromGguf(*m->file_);
  m->weights_ = Gemma4Weights::Bind(*m->file_, m->config_);
  const Gemma4Config& c = m->config_;
  if (!m->weights_.rope_freqs.empty() &&
      static_cast<int>(m->weights_.rope_freqs.size()) != c.n_rot_full / 2) {
    Fail(ErrorKind::kInvalidArgument, path + ": rope_freqs.weight has " +
                                          std::to_string(m->weights_.rope_freqs.size()) +
                                          " values, expected " + std::to_string(c.n_rot_full / 2));
  }
  if (options.repack) m->weights_.Pack();
  m->media_attention_ = options.media_attention;
  if (m->media_attention_ == MediaAttention::kDefault) {
    m->media_attention_ = m->config_.n_embd_per_layer > 0 ? MediaAttention::kCausal
                                                          : MediaAttention::kBidirectionalSliding;
  }
  for (const Gemma4LayerConfig& lc : c.layers) {
    if (lc.sliding) {
      m->rope_.push_back(kernels::Rope::Neox(lc.head_dim, lc.n_rot, lc.rope_base));
    } else {
      m->rope_.push_back(
          kernels::Rope::Neox(lc.head_dim, lc.n_rot, lc.rope_base, m->weights_.rope_freqs));
    }
    const auto same = std::find(m->rope_.begin(), m->rope_.end(), m->rope_.back());
    m->rope_angles_from_.push_back(static_cast<int>(same - m->rope_.begin()));
  }
  return m;
}

std::unique_ptr<KvCache> Gemma4Model::NewKvCache(const KvCacheOptions& options) const {
  std::vector<KvLayerSpec> specs;
  for (int l = 0; l < config_.n_layer_kv(); ++l) {
    const Gemma4LayerConfig& lc = config_.layers[l];
    specs.push_back({lc.n_head_kv, lc.head_dim, lc.sliding ? config_.sliding_window : 0});
  }
  return std::make_unique<KvCache>(std::move(specs), options);
}

double Gemma4Model::BytesPerToken() const {
  double bytes = 0;
  for (const TensorInfo& t : file_->tensors()) {
    if (t.name == "per_layer_token_embd.weight") continue;
    double b = static_cast<double>(t.nbytes);
    if (t.name.find("_exps") != std::string::npos && config_.n_expert > 0) {
      b *= static_cast<double>(config_.n_expert_used) / config_.n_expert;
    }
    bytes += b;
  }
  return bytes;
}

const GgufMetadata& Gemma4Model::metadata() const {
  return file_->metadata();
}

void Gemma4Model::EmbedToken(int32_t token, float* out) const {
  kernels::EmbedRow(weights_.token_embd, token, std::sqrt(static_cast<float>(config_.n_embd)), out);
}

void Gemma4Model::Forward(const ForwardBatch& batch, KvCache& cache, ForwardOutput& out,
                          ThreadPool& pool) const {
  const Gemma4Config& c = config_;
  const int T = batch.size();
  const size_t D = c.n_embd;
  // Validate everything before touching the cache.
  std::vector<int32_t> next(cache.n_seq(), -1);
  for (int t = 0; t < T; ++t) {
    const int32_t tok = batch.tokens[t], seq = batch.seqs[t], pos = batch.positions[t];
    if (tok < 0 || tok >= c.n_vocab) {
      Fail(ErrorKind::kInvalidArgument, "token id " + std::to_string(tok) + " is outside [0, " +
                                            std::to_string(c.n_vocab) + ")");
    }
    if (seq < 0 || seq >= cache.n_seq()) {
      Fail(ErrorKind::kInvalidArgument, "sequence " + std::to_string(seq) + " is outside [0, " +
                                            std::to_string(cache.n_seq()) + ")");
    }
    if (next[seq] < 0) next[seq] = cache.Length(seq);
    if (pos != next[seq]) {
      Fail(ErrorKind::kInvalidArgument,
           "row " + std::to_string(t) + " of sequence " + std::to_string(seq) + " has position " +
               std::to_string(pos) + ", expected " + std::to_string(next[seq]));
    }
    ++next[seq];
  }
  if (static_cast<int>(batch.embeddings.size()) != T ||
      static_cast<int>(batch.sees_until.size()) != T) {
    Fail(ErrorKind::kInvalidArgument, "embeddings or sees_until do not have one entry per row");
  }
  for (int t = 0; t < T; ++t) {
    const int32_t until = batch.sees_until[t], seq = batch.seqs[t];
    if (until < batch.positions[t] || until >= next[seq]) {
      Fail(ErrorKind::kInvalidArgument,
           "row " + std::to_string(t) + " sees until position " + std::to_string(until) +
               ", outside its own position " + std::to_string(batch.positions[t]) +
               " and the batch's last of its sequence " + std::to_string(next[seq] - 1));
    }
  }
  if (static_cast<int>(batch.tree_parent_offset.size()) != T) {
    Fail(ErrorKind::kInvalidArgument, "tree_parent_offset does not have one entry per row");
  }
  for (int t = 0; t < T; ++t) {
    const int32_t up = batch.tree_parent_offset[t];
    if (up == 0) continue;
    const int p = t - up;
    if (up < 0 || p < 0 || batch.seqs[p] != batch.seqs[t] || batch.embeddings[t] != nullptr ||
        batch.embeddings[p] != nullptr || batch.sees_until[t] != batch.positions[t]) {
      Fail(ErrorKind::kInvalidArgument,
           "row " + std::to_string(t) + ": a draft tree row's parent (" + std::to_string(up) +
               " rows back) must be an earlier token row of its sequence, and the row a causal "
               "token row");
    }
  }
  if (!batch.logit_tokens.empty()) {
    if (static_cast<int>(batch.logit_tokens.size()) != T) {
      Fail(ErrorKind::kInvalidArgument, "logit_tokens has " +
                                            std::to_string(batch.logit_tokens.size()) +
                                            " rows, the batch " + std::to_string(T));
    }
    for (int t = 0; t < T; ++t) {
      for (int32_t id : batch.logit_tokens[t]) {
        if (id < 0 || id >= c.n_vocab) {
          Fail(ErrorKind::kInvalidArgument, "row " + std::to_string(t) + ": logit token " +
                                                std::to_string(id) + " is outside [0, " +
                                                std::to_string(c.n_vocab) + ")");
        }
      }
    }
  }
  for (int s = 0; s < cache.n_seq(); ++s) {
    if (next[s] >= 0 &&
        (next[s] > cache.n_ctx() || next[s] - cache.Length(s) > cache.max_batch())) {
      Fail(ErrorKind::kInvalidArgument,
           "sequence " + std::to_string(s) + ": " + std::to_string(next[s] - cache.Length(s)) +
               " new positions from " + std::to_string(cache.Length(s)) + " exceed the context (" +
               std::to_string(cache.n_ctx()) + ") or batch limit (" +
               std::to_string(cache.max_batch()) + ")");
    }
  }
  for (int s = 0; s < cache.n_seq(); ++s) {
    if (next[s] >= 0) cache.Append(s, next[s] - cache.Length(s));
  }

  std::lock_guard<std::mutex> lock(scratch_mu_);
  if (!scratch_) scratch_ = std::make_unique<Scratch>();
  Scratch& s = *scratch_;
  GrowRows(s.x, T, D);
  kernels::EmbedRows(weights_.token_embd, batch.tokens.data(), T,
                     std::sqrt(static_cast<float>(c.n_embd)), s.x.data(), D, &pool);
  for (int t = 0; t < T; ++t) {  // media rows: the given embedding, unscaled (token 0's PLE row)
    if (batch.embeddings[t])
      std::memcpy(s.x.data() + t * D, batch.embeddings[t], D * sizeof(float));
  }
  if (c.n_embd_per_layer > 0) PerLayerEmbeddings(T, batch, s, pool);
  TreeRows(batch, s);
  s.rope_angles.resize(c.n_layer);
  for (int l = 0; l < c.n_layer; ++l) {
    if (rope_angles_from_[l] != l) continue;
    s.rope_angles[l].resize(static_cast<size_t>(T) * rope_[l].n_rot());
    rope_[l].Angles(s.stands_at.data(), T, s.rope_angles[l].data());
  }
  for (int l = 0; l < c.n_layer; ++l) Layer(l, T, batch, s, cache, pool);

  out.n_vocab = c.n_vocab;
  out.n_embd = c.n_embd;
  out.hidden.resize(T * D);
  RowNorm(c.rms_eps, pool).Apply(weights_.output_norm, s.x.data(), T, out.hidden.data());
  out.logit_rows.clear();
  for (int t = 0; t < T; ++t) {
    if (batch.want_logits[t]) out.logit_rows.push_back(t);
  }
  Logits(batch, out, pool);
  // A prefill's activations are large: keep a verification's worth (growing them again after
  // every prompt cost the first verification of each size its page faults, which the
  // speculation planner took for a verify cost).
  if (T > BlockScratch::kShrinkAbove) s.Shrink(T);
}

void Gemma4Model::Logits(const ForwardBatch& batch, ForwardOutput& out, ThreadPool& pool) const {
  const Gemma4Config& c = config_;
  const size_t D = c.n_embd, V = c.n_vocab;
  const int n_out = static_cast<int>(out.logit_rows.size());
  // Logits row i's token list (ForwardBatch::logit_tokens), or null: every token.
  const auto limited = [&](int i) -> const std::vector<int32_t>* {
    if (batch.logit_tokens.empty()) return nullptr;
    const std::vector<int32_t>& ids = batch.logit_tokens[out.logit_rows[i]];
    return ids.empty() ? nullptr : &ids;
  };
  const auto softcap = [&](float* x, size_t n) {
    if (c.final_logit_softcap > 0) {
      kernels::Softcap(x, c.final_logit_softcap, static_cast<int64_t>(n), x, pool);
    }
  };
  // Rows with every token in one product (straight into out.logits when that is all of them).
  std::vector<int> full;
  for (int i = 0; i < n_out; ++i) {
    if (!limited(i)) full.push_back(i);
  }
  const int n_full = static_cast<int>(full.size());
  const size_t need = static_cast<size_t>(n_out) * V;
  if (out.logits.capacity() < need) {
    // Grown to a verification's worth of rows at once, its pages touched now by the zero fill:
    // growing a few rows at a time cost each new size's first forward its page faults (a row is
    // a float per vocabulary entry), which the speculation planner took for a verify cost.
    out.logits.resize(std::max(need, kLogitRowsKept * V));
  }
  out.logits.resize(need);
  std::vector<float> h(n_full * D);
  for (int j = 0; j < n_full; ++j) {
    std::memcpy(h.data() + j * D, out.Hidden(out.logit_rows[full[j]]), D * sizeof(float));
  }
  std::vector<float> dense(n_full == n_out ? 0 : n_full * V);
  float* y = n_full == n_out ? out.logits.data() : dense.data();
  MatMul(weights_.output, h.data(), n_full, y, pool);
  softcap(y, n_full * V);
  if (n_full == n_out) return;
  for (int j = 0; j < n_full; ++j) {
    std::memcpy(out.logits.data() + full[j] * V, dense.data() + j * V, V * sizeof(float));
  }
  // Limited rows: those rows of the head, gathered; the rest of the row -inf.
  std::vector<float> values;
  for (int i = 0; i < n_out; ++i) {
    const std::vector<int32_t>* ids = limited(i);
    if (!ids) continue;
    values.resize(ids->size());
    kernels::MatMulRows(weights_.output, ids->data(), static_cast<int64_t>(ids->size()),
                        out.Hidden(out.logit_rows[i]), 1, values.data(), pool);
    softcap(values.data(), values.size());
    float* logits = out.logits.data() + i * V;
    std::fill(logits, logits + V, -std::numeric_limits<float>::infinity());
    for (size_t k = 0; k < ids->size(); ++k) logits[(*ids)[k]] = values[k];
  }
}

// Per-layer inputs (E2B/E4B), docs/gemma4.md § Per-layer embeddings:
//   ple = (RMSNorm((W_plm · x0) / sqrt(D)) + E_ple[id] · sqrt(P)) / sqrt(2), as [T][L][P].
void Gemma4Model::PerLayerEmbeddings(int T, const ForwardBatch& batch, Scratch& s,
                                     ThreadPool& pool) const {
  const Gemma4Config& c = config_;
  const size_t P = c.n_embd_per_layer, LP = P * c.n_layer;
  GrowRows(s.ple, T, LP);
  GrowRows(s.ple_proj, T, LP);
  kernels::EmbedRows(weights_.per_layer_token_embd, batch.tokens.data(), T,
                     std::sqrt(static_cast<float>(P)), s.ple.data(), LP, &pool);
  MatMul(weights_.per_layer_model_proj, s.x.data(), T, s.ple_proj.data(), pool);
  kernels::Scale(s.ple_proj.data(), 1.0f / std::sqrt(static_cast<float>(c.n_embd)), T * LP,
                 s.ple_proj.data());
  RowNorm(c.rms_eps, pool)
      .InPlace(weights_.per_layer_proj_norm, s.ple_proj.data(),
               static_cast<int64_t>(T) * c.n_layer);
  kernels::Add(s.ple_proj.data(), s.ple.data(), T * LP, s.ple.data());
  kernels::Scale(s.ple.data(), 1.0f / std::sqrt(2.0f), T * LP, s.ple.data());
}

void Gemma4Model::Layer(int l, int T, const ForwardBatch& batch, Scratch& s, KvCache& cache,
                        ThreadPool& pool) const {
  const Gemma4Config& c = config_;
  const Gemma4LayerWeights& w = weights_.layers[l];
  const DecoderLayer layer{c, c.layers[l], w, rope_[l], s.rope_angles[rope_angles_from_[l]].data()};
  const size_t D = c.n_embd;

  // The keys and values (KV-owning layers) are projected in the queries' job.
  std::array<kernels::MatMulProduct, 2> kv;
  size_t n_kv = 0;
  if (c.layers[l].owns_kv) {
    const size_t kvd = static_cast<size_t>(c.layers[l].n_head_kv) * c.layers[l].head_dim;
    GrowRows(s.k, T, kvd);
    GrowRows(s.v, T, kvd);
    kv[n_kv++] = {&w.attn_k, s.k.data()};
    if (w.attn_v.data != nullptr) kv[n_kv++] = {&w.attn_v, s.v.data()};
  }
  AttentionBlock(layer, T, s.stands_at.data(), s.x.data(), s, pool, {kv.data(), n_kv},
                 [&] { Attention(l, T, batch, s, cache, pool); });
  if (c.n_expert > 0) {
    MoeFfn(w, T, s, pool);
  } else {
    FfnBlock(layer, T, s.x.data(), s, pool);
  }

  // Per-layer embedding block: x += RMSNorm(W_proj · (gelu(W_gate · x) ⊙ ple[l])).
  if (c.n_embd_per_layer > 0) {
    const size_t P = c.n_embd_per_layer, LP = P * c.n_layer;
    GrowRows(s.ple_gate, T, P);
    GrowRows(s.o, T, D);
    MatMul(w.ple_gate, s.x.data(), T, s.ple_gate.data(), pool);
    for (int t = 0; t < T; ++t) {
      float* g = s.ple_gate.data() + t * P;
      kernels::GeGlu(g, s.ple.data() + t * LP + l * P, P, g);
    }
    MatMul(w.ple_proj, s.ple_gate.data(), T, s.o.data(), pool);
    RowNorm(c.rms_eps, pool).InPlace(w.ple_post_norm, s.o.data(), T);
    AddInPlace(s.x.data(), s.o.data(), T * D);
  }
  kernels::Scale(s.x.data(), w.output_scale, T * D, s.x.data());
}

// Scratch::stands_at, tree_paths and remaps of the batch's rows (docs/mtp.md § Draft trees).
void Gemma4Model::TreeRows(const ForwardBatch& batch, Scratch& s) const {
  const int T = batch.size();
  s.stands_at.assign(batch.positions.begin(), batch.positions.end());
  s.tree = std::any_of(batch.tree_parent_offset.begin(), batch.tree_parent_offset.end(),
                       [](int32_t up) { return up != 0; });
  if (!s.tree) return;
  s.tree_paths.resize(T);
  s.remaps.assign(T, kernels::KeyRemap{});
  for (int t = 0; t < T; ++t) {
    const int32_t up = batch.tree_parent_offset[t];
    std::vector<int32_t>& path = s.tree_paths[t];
    path.clear();
    if (up == 0) continue;
    const int p = t - up;
    if (batch.tree_parent_offset[p] == 0) {
      path.push_back(batch.positions[p]);  // the tree's root
    } else {
      path = s.tree_paths[p];
    }
    path.push_back(batch.positions[t]);
    s.stands_at[t] = s.stands_at[p] + 1;
  }
  for (int t = 0; t < T; ++t) {  // after the paths: a later row's path vector no longer moves
    const std::vector<int32_t>& path = s.tree_paths[t];
    if (path.empty()) continue;
    s.remaps[t] = kernels::KeyRemap{path.data(), path.front(), static_cast<int32_t>(path.size())};
  }
}

// The attention step of the target: K/V of the rows (KV-owning layers) stored in the cache, then
// attention of the queries s.q over each row's visible keys into s.att.
void Gemma4Model::Attention(int l, int T, const ForwardBatch& batch, Scratch& s, KvCache& cache,
                            ThreadPool& pool) const {
  const Gemma4Config& c = config_;
  const Gemma4LayerConfig& lc = c.layers[l];
  const Gemma4LayerWeights& w = weights_.layers[l];
  const RowNorm norm(c.rms_eps, pool);
  const int hd = lc.head_dim, H = c.n_head, Hkv = lc.n_head_kv;
  const size_t qd = static_cast<size_t>(H) * hd, kvd = static_cast<size_t>(Hkv) * hd;

  if (lc.owns_kv) {                  // s.k and s.v hold the projections (Layer)
    if (w.attn_v.data == nullptr) {  // V = K: the raw projection, before k_norm and RoPE
      std::memcpy(s.v.data(), s.k.data(), T * kvd * sizeof(float));
    }
    norm.InPlace(w.attn_k_norm, s.k.data(), static_cast<int64_t>(T) * Hkv);
    rope_[l].ApplyAngles(s.k.data(), T, kvd, Hkv, s.rope_angles[rope_angles_from_[l]].data());
    norm.Unscaled(hd, s.v.data(), static_cast<int64_t>(T) * Hkv, s.v.data());
    for (int t = 0; t < T; ++t) {
      for (int h = 0; h < Hkv; ++h) {
        const size_t off = t * kvd + static_cast<size_t>(h) * hd;
        kernels::StoreKvRow(cache.type(), s.k.data() + off, hd,
                            cache.KRow(l, batch.seqs[t], batch.positions[t], h));
        kernels::StoreKvRow(cache.type(), s.v.data() + off, hd,
                            cache.VRow(l, batch.seqs[t], batch.positions[t], h));
      }
    }
  }

  // One attention call per run of rows of the same sequence.
  for (int t0 = 0; t0 < T;) {
    int t1 = t0 + 1;
    while (t1 < T && batch.seqs[t1] == batch.seqs[t0]) ++t1;
    kernels::AttentionArgs args;
    args.n_rows = t1 - t0;
    args.n_heads = H;
    args.q = s.q.data() + t0 * qd;
    args.q_row_stride = qd;
    args.out = s.att.data() + t0 * qd;
    args.out_row_stride = qd;
    args.positions = s.stands_at.data() + t0;
    if (s.tree) args.remaps = s.remaps.data() + t0;
    args.window = lc.sliding ? c.sliding_window : 0;
    // Rows of an image attended both ways see up to the image's end on the layers the rule
    // names; the others stay causal.
    const bool both_ways =
        media_attention_ == MediaAttention::kBidirectional ||
        (media_attention_ == MediaAttention::kBidirectionalSliding && lc.sliding);
    bool ahead = false;
    for (int t = t0; t < t1; ++t) ahead = ahead || batch.sees_until[t] != batch.positions[t];
    std::vector<kernels::KeyRange> ranges;
    if (both_ways && ahead) {
      for (int t = t0; t < t1; ++t) {
        kernels::KeyRange r = kernels::VisibleKeys(batch.positions[t], args.window);
        r.end = batch.sees_until[t] + 1;
        ranges.push_back(r);
      }
      args.key_ranges = ranges.data();
    }
    args.kv = cache.View(lc.kv_source, batch.seqs[t0]);
    args.scale = 1.0f;
    kernels::Attention(args, &pool);
    t0 = t1;
  }
}

// Mixture of experts with a shared dense MLP (26B-A4B), docs/gemma4.md § Mixture of experts.
void Gemma4Model::MoeFfn(const Gemma4LayerWeights& w, int T, Scratch& s, ThreadPool& pool) const {
  const Gemma4Config& c = config_;
  const size_t D = c.n_embd;
  const int E = c.n_expert, K = c.n_expert_used, F = c.n_ff_expert;
  const float* r = s.x.data();
  const RowNorm norm(c.rms_eps, pool);

  // Dense branch: f1 = RMSNorm(GeGLU(RMSNorm(r; ffn_norm)); post_ffw_norm_1), into s.f.
  GrowRows(s.a, T, D);
  GrowRows(s.f, T, D);
  norm.Apply(w.ffn_norm, r, T, s.a.data());
  GeGluFfn(w, T, s.a.data(), s.f.data(), s, pool);
  norm.InPlace(w.post_ffw_norm_1, s.f.data(), T);

  // Router: softmax(W_r · (RMSNorm(r) ⊙ scale / sqrt(D))), top-K, renormalised, per-expert scale.
  std::vector<float> z(T * D), logits(static_cast<size_t>(T) * E), probs(E);
  norm.Unscaled(static_cast<int64_t>(D), r, T, z.data());
  const float inv_sqrt_d = 1.0f / std::sqrt(static_cast<float>(D));
  for (int t = 0; t < T; ++t) {
    float* zt = z.data() + t * D;
    for (size_t i = 0; i < D; ++i) zt[i] = zt[i] * w.router_scale[i] * inv_sqrt_d;
  }
  MatMul(w.router, z.data(), T, logits.data(), pool);
  std::vector<int> chosen(static_cast<size_t>(T) * K);
  std::vector<float> weight(static_cast<size_t>(T) * K);
  std::vector<int> order(E);
  for (int t = 0; t < T; ++t) {
    kernels::Softmax(logits.data() + static_cast<size_t>(t) * E, E, probs.data());
    for (int e = 0; e < E; ++e) order[e] = e;
    std::partial_sort(order.begin(), order.begin() + K, order.end(), [&probs](int a, int b) {
      return probs[a] > probs[b] || (probs[a] == probs[b] && a < b);
    });
    float sum = 0;
    for (int k = 0; k < K; ++k) sum += probs[order[k]];
    for (int k = 0; k < K; ++k) {
      chosen[t * K + k] = order[k];
      weight[t * K + k] = probs[order[k]] / sum * w.expert_scale[order[k]];
    }
  }

  // Experts, grouped by expert so each expert's weights are read once: y[t][k] = expert(x2[t]).
  std::vector<float> x2(T * D), y(static_cast<size_t>(T) * K * D);
  norm.Apply(w.pre_ffw_norm_2, r, T, x2.data());
  std::vector<float> in, gu, act, out;
  for (int e = 0; e < E; ++e) {
    std::vector<int> slots;  // t * K + k of every (token, rank) routed to e
    for (int i = 0; i < T * K; ++i) {
      if (chosen[i] == e) slots.push_back(i);
    }
    if (slots.empty()) continue;
    const int n = static_cast<int>(slots.size());
    in.resize(n * D);
    for (int j = 0; j < n; ++j) {
      std::memcpy(in.data() + j * D, x2.data() + (slots[j] / K) * D, D * sizeof(float));
    }
    gu.resize(static_cast<size_t>(n) * 2 * F);
    act.resize(static_cast<size_t>(n) * F);
    out.resize(n * D);
    MatMul(w.ExpertGateUp(e), in.data(), n, gu.data(), pool);
    for (int j = 0; j < n; ++j) {
      const float* g = gu.data() + static_cast<size_t>(j) * 2 * F;
      kernels::GeGlu(g, g + F, F, act.data() + static_cast<size_t>(j) * F);
    }
    MatMul(w.ExpertDown(e), act.data(), n, out.data(), pool);
    for (int j = 0; j < n; ++j) {
      std::memcpy(y.data() + slots[j] * D, out.data() + j * D, D * sizeof(float));
    }
  }
  // f2 = RMSNorm(Σ_k weight_k · y_k; post_ffw_norm_2), summed in rank order; then
  // x = r + RMSNorm(f1 + f2; post_ffw_norm).
  std::vector<float> f2(T * D, 0.0f);
  for (int t = 0; t < T; ++t) {
    float* acc = f2.data() + t * D;
    for (int k = 0; k < K; ++k) {
      const float wk = weight[t * K + k];
      const float* yk = y.data() + (static_cast<size_t>(t) * K + k) * D;
      for (size_t i = 0; i < D; ++i) acc[i] += wk * yk[i];
    }
  }
  norm.InPlace(w.post_ffw_norm_2, f2.data(), T);
  kernels::Add(s.f.data(), f2.data(), T * D, s.f.data());
  norm.InPlace(w.post_ffw_norm, s.f.data(), T);
  AddInPlace(s.x.data(), s.f.data(), T * D);
}

}  // namespace tandem
