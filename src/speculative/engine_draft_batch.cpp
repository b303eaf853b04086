// Batched MTP drafting: MtpDrafter's per-step logic, run for several slots per assistant Step.
#include "speculative/engine_draft_batch.h"

#include <chrono>
#include <exception>

#include "sampling/sampler.h"

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

void DraftBatch(const Gemma4Assistant& assistant, const KvCache& target_cache,
                std::vector<DraftJob>& jobs, ThreadPool& pool) {
  const int B = assistant.n_embd_out();
  std::vector<LiveDraft> live(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    const DraftRequest& r = jobs[j].request;
    jobs[j].result.Clear();
    jobs[j].ms = 0;
    jobs[j].error.clear();
    live[j].token = r.last;
    live[j].hidden.assign(r.hidden, r.hidden + B);
    live[j].history.assign(r.history.begin(), r.history.end());
    live[j].drafting = r.n_max > 0;
  }

  // Row r of `step` belongs to job j: stop on low confidence, else take the draft token.
  auto consume = [&](const DraftOutput& step, int r, size_t j) {
    DraftJob& job = jobs[j];
    LiveDraft& l = live[j];
    ++job.result.steps;
    try {
      const float* logits = step.Logits(r);
      const int V = step.n_vocab;
      if (job.request.p_min > 0 && TopKProbabilityOfBest(logits, V) < job.request.p_min) {
        l.drafting = false;
        return;
      }
      if (job.request.sampler == nullptr) {
        l.token = Argmax(std::span<const float>(logits, V));
      } else {
        std::vector<float> q(V);
        l.token = job.request.sampler->Sample(logits, V, l.history, *job.request.rng, q);
        job.result.q.push_back(std::move(q));
      }
      job.result.tokens.push_back(l.token);
      l.history.push_back(l.token);
      l.hidden.assign(step.Hidden(r), step.Hidden(r) + B);
      if (static_cast<int>(job.result.tokens.size()) >= job.request.n_max) l.drafting = false;
    } catch (const std::exception& e) {
      FailJob(job, l, e.what());
    }
  };

  DraftOutput step, single;
  std::vector<DraftRow> rows;
  std::vector<size_t> owner;  // [rows] job of each row
  for (;;) {
    rows.clear();
    owner.clear();
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (!live[j].drafting) continue;
      const DraftRequest& r = jobs[j].request;
      rows.push_back(DraftRow{live[j].token, r.pos, r.seq, live[j].hidden.data()});
      owner.push_back(j);
    }
    if (rows.empty()) break;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      assistant.Step(rows, target_cache, step, pool);
      for (size_t r = 0; r < rows.size(); ++r) consume(step, static_cast<int>(r), owner[r]);
    } catch (const std::exception&) {
      // Step checks its rows before computing; find the row at fault by running each alone.
      for (size_t r = 0; r < rows.size(); ++r) {
        try {
          assistant.Step({rows[r]}, target_cache, single, pool);
          consume(single, 0, owner[r]);
        } catch (const std::exception& e) {
          FailJob(jobs[owner[r]], live[owner[r]], e.what());
        }
      }
    }
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    for (size_t j : owner) jobs[j].ms += ms;
  }
  for (DraftJob& job : jobs) {
    if (static_cast<int>(job.result.tokens.size()) < job.request.n_min) {
      job.result.tokens.clear();
      job.result.q.clear();
    }
  }
}

}  // namespace tandem
