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
  job.result.tokens.clear();
  job.result.q.clear();
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
    .warm_up = true,
    .warmed_by = SpecType::kChain,
    .make = MakeMtpDrafter,
};

}  // namespace tandem
