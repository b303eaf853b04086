// The drafter interface of the speculative round: propose up to n tokens that extend the last
// committed token of a target sequence. Implementations: the MTP assistant (MtpDrafter, reads
// the target's KV cache), a separate small draft model (DraftModelDrafter, its own cache), and
// prompt lookup (ChainDrafter: DraftPlanner, draft_planner.h, looks the proposal up, ChainDrafter
// puts it first, the MTP drafter extending it for chain, nothing for ngram).
//
// Adding a drafter (docs/architecture.md § Adding a drafter):
//   1. In a file of its own, derive from Drafter and implement Draft() for one request, and
//      BytesPerStep(). That is enough: the default DraftBatch() runs the jobs of a step one by
//      one. Override DraftBatch() when several sequences can share one forward (as the model
//      drafters here do).
//   2. A drafter that reads logits chooses each token with ChooseDraftToken() (greedy or
//      sampled, p_min, q for lossless verification) and ends with ApplyDraftMin(); one that
//      proposes tokens without logits must still give a q per token when request.sampler is set
//      (the distribution it drew the token from, e.g. one-hot for a deterministic proposal).
//   3. In the same file, define its DrafterEntry (drafter_registry.h: name, start-up checks,
//      warm-up, factory), and list it in drafter_list.h; the command line, Generator and
//      `tandem serve` then serve it.
// Whatever the drafter proposes, verification (speculative_round.cpp) keeps the output
// lossless: greedy output equals plain decoding, sampled output follows the target.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "speculative/draft_tree.h"

namespace tandem {

class DraftConstraint;
class KvCache;
struct KvCacheOptions;
class Rng;
class Sampler;

struct DraftRequest {
  int32_t last = 0;               // the last committed token, not yet in the target cache
  int32_t pos = 0;                // its position
  int32_t seq = 0;                // target cache sequence
  const float* hidden = nullptr;  // target post-norm hidden of the row that produced `last`
  std::span<const int32_t>
      history;  // every committed token (prompt and generated), `last` included
  // Tokens proposed by prompt lookup (DraftPlanner), taken first by ChainDrafter, which lets
  // the model extend them to n_max; other drafters ignore it.
  std::span<const int32_t> lookup;
  int n_max = 0;
  int n_min = 0;       // fewer drafts than this: propose none
  float p_min = 0.0f;  // stop at a draft whose top-10-renormalised probability is below this
  Sampler* sampler = nullptr;  // null: greedy drafts; else drafts are sampled from q
  Rng* rng = nullptr;
  // Non-null: drafts must follow this constraint (a grammar); ChooseDraftToken applies it. It
  // advances over the drafts; the slot rolls it back after drafting.
  DraftConstraint* constraint = nullptr;
  // With a constraint: a draft that reaches a forced run longer than this (DraftConstraint::
  // ForcedRun) ends there instead of spending drafter steps through it, and the slot appends the
  // run for free; a shorter one is drafted through (each forced token still costs a step, whose
  // hidden the next step needs) and the draft goes on after it. -1: never end at a run.
  int forced_run_max = -1;
  // On (TreePlan::on): a drafter that drafts trees (the MTP assistant) may draft one, n_max its
  // trunk, at most tree.max_extra branches beside it, each token its top choice at its node (a
  // point mass; such requests have no sampler); others draft the chain. Never with a
  // constraint or a lookup proposal.
  TreePlan tree;
};

struct DraftResult {
  std::vector<int32_t> tokens;
  std::vector<std::vector<float>> q;  // per draft token: the distribution it was sampled from
  int steps = 0;                      // drafter forward steps run (cost accounting)
  int n_lookup = 0;  // the leading tokens that came from prompt lookup (their q is empty)
  // A draft tree (docs/mtp.md § Draft trees), else empty: per token its parent (an earlier
  // token's index, -1: the committed token) and the drafter's probability of it; the first
  // `trunk` tokens are the chain the round planned, each the parent of the next.
  std::vector<int32_t> tree_parent;
  std::vector<float> tree_p;
  int trunk = 0;
  bool is_tree() const { return !tree_parent.empty(); }
  void Clear() {
    tokens.clear();
    q.clear();
    steps = 0;
    n_lookup = 0;
    tree_parent.clear();
    tree_p.clear();
    trunk = 0;
  }
};

// One sequence's share of a batched draft.
struct DraftJob {
  DraftRequest request;  // pointers must stay valid during DraftBatch
  DraftResult result;
  double ms = 0;      // wall time of the drafter steps this job took part in
  std::string error;  // non-empty: drafting failed for this job (result is then empty)

  // What a DraftBatch starts from for each job: no drafts, no time, no error.
  void ClearOutputs() {
    result.Clear();
    ms = 0;
    error.clear();
  }
};

class Drafter {
 public:
  virtual ~Drafter() = default;
  // Called once by the engine before any drafting, with the options of the target's cache
  // (n_seq: the sequences it drafts for). A drafter with a cache of its own sizes it here.
  virtual void Prepare(const KvCacheOptions& target_kv) { (void)target_kv; }
  // Drafts for one request. Throws on failure.
  virtual void Draft(const DraftRequest& request, const KvCache& target_cache,
                     DraftResult& result) = 0;
  // Drafts every job (of distinct sequences), each exactly as Draft() would alone. A failure
  // confined to one job is reported in its `error`; the other jobs are unaffected. The default
  // runs Draft() job by job.
  virtual void DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache);
  // Weight bytes one draft step reads (the static cost model of sampled requests).
  virtual double BytesPerStep() const = 0;

  // Drafters that draft from earlier requests' text (suffix drafting, suffix_drafter.h); the
  // others keep nothing and propose nothing.
  //
  // Up to n_max tokens that continued the longest suffix of `context` found in `tenant`'s
  // earlier text, proposed like prompt lookup's (free drafts, DraftPlanner puts them in
  // DraftRequest::lookup); `match` receives the suffix's length, 0 when none was found.
  virtual std::vector<int32_t> ProposeFromPast(std::string_view tenant,
                                               std::span<const int32_t> context, int n_max,
                                               int* match) {
    (void)tenant, (void)context, (void)n_max;
    if (match != nullptr) *match = 0;
    return {};
  }
  // A request of `tenant` that drafted with this drafter ended; `tokens`: its prompt and output.
  virtual void LearnRequest(std::string_view tenant, std::span<const int32_t> tokens) {
    (void)tenant, (void)tokens;
  }
};

// Runs `drafter`'s DraftBatch for one request; throws Error(kInternal) with the job's error.
// (A drafter whose batch path is its only path implements Draft() with this.)
void DraftAlone(Drafter& drafter, const DraftRequest& request, const KvCache& target_cache,
                DraftResult& result);

// Whether the drafter should end `request`'s draft before its next step: the constraint forces
// a run of more than request.forced_run_max tokens from here.
bool StopsAtForced(const DraftRequest& request);

// One draft step's choice from the drafter's logits [n_vocab], shared by every drafter: a token
// the constraint forces is taken as it is (an empty q: a point mass; the logits, which a
// centroid head may not even have for it, are not read); else the logits are first masked by
// request.constraint (if any; nothing allowed: false). False
// (drafting stops) when request.p_min is set and the best token's top-10 probability is below
// it; else `token` is the argmax (greedy, request.sampler null) or a sample from the request's
// sampler with `history` (its distribution appended to result.q), appended to result.tokens.
// `nothing_allowed` (optional) is set when it returns false because the constraint left no token
// with a finite logit.
bool ChooseDraftToken(const float* logits, int n_vocab, const DraftRequest& request,
                      std::span<const int32_t> history, DraftResult& result, int32_t& token,
                      bool* nothing_allowed = nullptr);

// Drops a draft shorter than request.n_min (the round then runs a plain step).
void ApplyDraftMin(const DraftRequest& request, DraftResult& result);

// Probability of the best token after keeping the 10 largest logits and renormalising (the
// measure llama.cpp's --draft-p-min compares against).
float TopKProbabilityOfBest(const float* logits, int n_vocab, int k = 10);

}  // namespace tandem
