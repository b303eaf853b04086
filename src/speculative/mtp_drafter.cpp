// MTP drafting, batched over the sequences that draft in the same step.
#include "speculative/mtp_drafter.h"

#include <exception>
#include <limits>
#include <vector>

#include "base/stopwatch.h"
#include "speculative/draft_constraint.h"
#include "speculative/drafter_registry.h"

namespace tandem {
namespace {

// A job's drafting state between steps.
struct LiveDraft {
  int32_t token = 0;             // the token the next step extends
  std::vector<float> hidden;     // [B] its hidden
  std::vector<int32_t> history;  // committed tokens + drafts so far
  bool drafting = false;
};

void FailJob(DraftJob& job, LiveDraft& live, const char* what) {
  job.error = what;
  job.result.Clear();
  live.drafting = false;
}

}  // namespace

void MtpDrafter::DraftBatch(std::span<DraftJob> jobs, const KvCache& target_cache) {
  const int B = assistant_.n_embd_out();
  std::vector<LiveDraft> live(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    const DraftRequest& r = jobs[j].request;
    jobs[j].ClearOutputs();
    live[j].token = r.last;
    live[j].hidden.assign(r.hidden, r.hidden + B);
    live[j].history.assign(r.history.begin(), r.history.end());
    live[j].drafting = r.n_max > 0;
  }

  std::vector<size_t> trees;
  for (size_t j = 0; j < jobs.size(); ++j) {
    const DraftRequest& r = jobs[j].request;
    if (r.tree.on() && r.constraint == nullptr && r.lookup.empty() && r.n_max > 0) {
      trees.push_back(j);
      live[j].drafting = false;
    }
  }
  if (!trees.empty()) DraftTrees(jobs, trees, target_cache);

  const int D = assistant_.config().n_embd;
  std::vector<int32_t> allowed;
  std::vector<float> values, fallback;
  // Row r of `step` belongs to job j: stop on low confidence, else take the draft token.
  auto consume = [&](const DraftOutput& step, int r, size_t j) {
    DraftJob& job = jobs[j];
    LiveDraft& l = live[j];
    ++job.result.steps;
    try {
      bool nothing_allowed = false;
      const DraftRequest& req = job.request;
      if (!ChooseDraftToken(step.Logits(r), step.n_vocab, req, l.history, job.result, l.token,
                            &nothing_allowed)) {
        // The centroid head kept none of the few tokens the constraint allows: the dense head
        // scores just those (the draft's q is then their distribution), else the draft ends.
        const bool rescored = nothing_allowed && assistant_.uses_centroids() &&
                              req.constraint->AllowedTokens(kRescoreMax, allowed);
        if (rescored) {
          values.resize(allowed.size());
          assistant_.TokenLogits(step.Normed(r, D), allowed, values.data(), pool_);
          fallback.assign(step.n_vocab, -std::numeric_limits<float>::infinity());
          for (size_t i = 0; i < allowed.size(); ++i) fallback[allowed[i]] = values[i];
        }
        if (!rescored ||
            !ChooseDraftToken(fallback.data(), step.n_vocab, req, l.history, job.result, l.token)) {
          l.drafting = false;
          return;
        }
      }
      l.history.push_back(l.token);
      l.hidden.assign(step.Hidden(r), step.Hidden(r) + B);
      if (static_cast<int>(job.result.tokens.size()) >= job.request.n_max) l.drafting = false;
    } catch (const std::exception& e) {
      FailJob(job, l, e.what());
    }
  };

  std::vector<DraftRow> rows;
  std::vector<size_t> owner;  // [rows] job of each row
  for (;;) {
    rows.clear();
    owner.clear();
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (!live[j].drafting) continue;
      const DraftRequest& r = jobs[j].request;
      // A forced run needs no drafter: the slot appends it for free.
      if (StopsAtForced(r)) {
        live[j].drafting = false;
        continue;
      }
      rows.push_back(DraftRow{live[j].token, r.pos, r.seq, live[j].hidden.data()});
      owner.push_back(j);
    }
    if (rows.empty()) break;
    const auto t0 = SteadyClock::now();
    try {
      assistant_.Step(rows, target_cache, step_, pool_);
      for (size_t r = 0; r < rows.size(); ++r) consume(step_, static_cast<int>(r), owner[r]);
    } catch (const std::exception&) {
      // Step checks its rows before computing; find the row at fault by running each alone.
      for (size_t r = 0; r < rows.size(); ++r) {
        try {
          assistant_.Step({rows[r]}, target_cache, single_, pool_);
          consume(single_, 0, owner[r]);
        } catch (const std::exception& e) {
          FailJob(jobs[owner[r]], live[owner[r]], e.what());
        }
      }
    }
    const double ms = MsSince(t0);
    for (size_t j : owner) jobs[j].ms += ms;
  }
  for (DraftJob& job : jobs) ApplyDraftMin(job.request, job.result);
}

void MtpDrafter::DraftTrees(std::span<DraftJob> jobs, const std::vector<size_t>& which,
                            const KvCache& target_cache) {
  struct LiveTree {
    size_t job;
    TreeBuilder builder;
    // [node + 1]: the hidden the step expanding `node` gave (the root's at 0), which its
    // children's rows take.
    std::vector<std::vector<float>> produced;
    size_t first_row = 0, n_rows = 0;  // its rows in the step's batch (none once it failed)
  };
  std::vector<LiveTree> trees;
  for (size_t j : which) {
    trees.push_back(LiveTree{j, TreeBuilder(jobs[j].request.tree, jobs[j].request.n_max), {}});
  }
  const int B = assistant_.n_embd_out();
  std::vector<DraftRow> rows, own;
  std::vector<std::vector<TreeCandidate>> candidates;
  for (;;) {
    rows.clear();
    for (LiveTree& t : trees) {
      t.first_row = rows.size();
      t.n_rows = 0;
      if (!jobs[t.job].error.empty()) continue;
      const DraftRequest& r = jobs[t.job].request;
      for (const TreeBuilder::Expand& e : t.builder.Frontier()) {
        const float* hidden =
            e.node < 0 ? r.hidden : t.produced.at(t.builder.Parent(e.node) + 1).data();
        rows.push_back(DraftRow{e.node < 0 ? r.last : e.token, r.pos, r.seq, hidden});
      }
      t.n_rows = rows.size() - t.first_row;
    }
    if (rows.empty()) break;
    const auto t0 = SteadyClock::now();
    // Step checks its rows before computing: when the batch fails, each tree's rows run alone,
    // so that only the tree at fault fails.
    bool batched = true;
    try {
      assistant_.Step(rows, target_cache, step_, pool_);
    } catch (const std::exception&) {
      batched = false;
    }
    for (LiveTree& t : trees) {
      if (t.n_rows == 0) continue;
      const DraftOutput* out = &step_;
      int row = static_cast<int>(t.first_row);
      if (!batched) {
        own.assign(rows.begin() + t.first_row, rows.begin() + t.first_row + t.n_rows);
        try {
          assistant_.Step(own, target_cache, single_, pool_);
        } catch (const std::exception& e) {
          jobs[t.job].error = e.what();
          jobs[t.job].result.Clear();
          continue;
        }
        out = &single_;
        row = 0;
      }
      const DraftRequest& r = jobs[t.job].request;
      candidates.clear();
      for (const TreeBuilder::Expand& e : t.builder.Frontier()) {
        candidates.push_back(TopCandidates(out->Logits(row), out->n_vocab, r.tree.width));
        const size_t slot = static_cast<size_t>(e.node + 1);
        if (t.produced.size() <= slot) t.produced.resize(slot + 1);
        t.produced[slot].assign(out->Hidden(row), out->Hidden(row) + B);
        ++row;
      }
      // The drafter's stop rule on the trunk's tip (the first row while the trunk grows).
      const bool goes_on = !candidates[0].empty() && !(r.p_min > 0 && candidates[0][0].p < r.p_min);
      ++jobs[t.job].result.steps;
      t.builder.AddStep(candidates, goes_on);
    }
    const double ms = MsSince(t0);
    for (const LiveTree& t : trees) {
      if (t.n_rows > 0) jobs[t.job].ms += ms;
    }
  }
  // Every token is its node's top choice: a point mass (DraftRequest::tree).
  for (const LiveTree& t : trees) {
    if (jobs[t.job].error.empty()) t.builder.Finish(jobs[t.job].result);
  }
}

namespace {

std::unique_ptr<Drafter> MakeMtpDrafter(const DrafterSources& sources, const DrafterSet&) {
  return std::make_unique<MtpDrafter>(*sources.assistant, sources.pool);
}

}  // namespace

// --spec-type mtp: the target's MTP assistant, reading the target's KV cache. Chain's rounds run
// the same assistant, so they warm it when chain is loaded.
constinit const DrafterEntry kMtpDrafterEntry = {
    .name = "mtp",
    .model = DrafterModel::kAssistant,
    .trees = true,
    .warm_up = true,
    .warmed_by = SpecType::kChain,
    .make = MakeMtpDrafter,
};

}  // namespace tandem
