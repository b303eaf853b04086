#include "speculative/draft_model_drafter.h"

#include <algorithm>
#include <exception>
#include <string>

#include "base/error.h"
#include "base/stopwatch.h"
#include "gguf/gguf_reader.h"
#include "model/vocabulary_check.h"
#include "speculative/drafter_registry.h"

namespace tandem {

struct DraftModelDrafter::Live {
  std::vector<int32_t> history;  // committed tokens + drafts so far
  std::vector<float> logits;     // [n_vocab] of the job's last evaluated row
  bool drafting = false;
  bool failed = false;
};

DraftModelDrafter::DraftModelDrafter(const Gemma4Model& draft, const Gemma4Model& target,
                                     ThreadPool& pool)
    : draft_(draft), pool_(pool) {
  CheckSameVocabulary(draft.file(), draft.config().n_vocab, target.file(), target.config().n_vocab,
                      "draft model");
}

void DraftModelDrafter::Prepare(const KvCacheOptions& target_kv) {
  cache_ = draft_.NewKvCache(target_kv);
  cached_.assign(std::max(1, target_kv.n_seq), {});
}

void DraftModelDrafter::RunChunk(const std::vector<Row>& rows, size_t begin, size_t end,
                                 std::span<DraftJob> jobs, std::vector<Live>& live) {
  batch_.Clear();
  for (size_t i = begin; i < end; ++i) {
    batch_.Add(rows[i].token, rows[i].pos, jobs[rows[i].job].request.seq, rows[i].logits);
  }
  draft_.Forward(batch_, *cache_, out_, pool_);
  const int V = draft_.config().n_vocab;
  int logit = 0;
  for (size_t i = begin; i < end; ++i) {
    if (!rows[i].logits) continue;
    live[rows[i].job].logits.assign(out_.Logits(logit), out_.Logits(logit) + V);
    ++logit;
  }
}

void DraftModelDrafter::Run(const std::vector<Row>& rows, std::span<DraftJob> jobs,
                            std::vector<Live>& live) {
  const size_t max_batch = static_cast<size_t>(cache_->max_batch());
  for (size_t begin = 0; begin < rows.size(); begin += max_batch) {
    const size_t end = std::min(rows.size(), begin + max_batch);
    const auto t0 = SteadyClock::now();
    try {
      RunChunk(rows, begin, end, jobs, live);
    } catch (const std::exception&) {
      // Run each job's rows of the chunk alone (rolled back first) to find the one at fault.
      for (size_t j = 0; j < jobs.size(); ++j) {
        std::vector<Row> own;
        for (size_t i = begin; i < end; ++i) {
          if (rows[i].job == j) own.push_back(rows[i]);
        }
        if (own.empty() || live[j].failed) continue;
        const int32_t seq = jobs[j].request.seq;
        cache_->Truncate(seq, std::min(cache_->Length(seq), own.front().pos));
        try {
          RunChunk(own, 0, own.size(), jobs, live);
        } catch (const std::exception& e) {
          jobs[j].error = e.what();
          jobs[j].result.Clear();
          live[j].drafting = false;
          live[j].failed = true;
          cache_->Clear(seq);  // it may hold rows nobody committed
          cached_[seq].clear();
        }
      }
    }
    const double ms = MsSince(t0);
    for (size_t i = begin; i < end; ++i) {
      if (i == begin || rows[i].job != rows[i - 1].job) jobs[rows[i].job].ms += ms;
    }
  }
}

void DraftModelDrafter::DraftBatch(std::span<DraftJob> jobs, const KvCache&) {
  const int V = draft_.config().n_vocab;
  std::vector<Live> live(jobs.size());
  std::vector<Row> rows;
  // Catch up: per job, keep the longest cached prefix of its committed tokens (the last one is
  // fed too, for the logits of the first draft), then feed what is not cached.
  for (size_t j = 0; j < jobs.size(); ++j) {
    DraftJob& job = jobs[j];
    const DraftRequest& r = job.request;
    job.ClearOutputs();
    if (r.n_max <= 0) continue;
    if (cache_ == nullptr) {
      job.error = "draft model: Prepare() was not called";
      live[j].failed = true;
      continue;
    }
    if (r.seq < 0 || r.seq >= static_cast<int32_t>(cached_.size()) || r.history.empty()) {
      job.error = "draft model: sequence " + std::to_string(r.seq) + " is outside its cache";
      live[j].failed = true;
      continue;
    }
    std::vector<int32_t>& cached = cached_[r.seq];
    const std::span<const int32_t> committed = r.history.first(r.history.size() - 1);
    size_t common = 0;
    while (common < cached.size() && common < committed.size() &&
           cached[common] == committed[common]) {
      ++common;
    }
    if (!cache_->CanTruncateTo(r.seq, static_cast<int32_t>(common))) common = 0;
    cache_->Truncate(r.seq, static_cast<int32_t>(common));
    cached.resize(common);
    for (size_t i = common; i < r.history.size(); ++i) {
      rows.push_back(
          Row{j, r.history[i], static_cast<int32_t>(cached.size()), i + 1 == r.history.size()});
      cached.push_back(r.history[i]);
    }
    live[j].history.assign(r.history.begin(), r.history.end());
    live[j].drafting = true;
  }
  // Draft: one token per drafting job from its last logits, then one merged forward of the new
  // draft tokens.
  for (;;) {
    Run(rows, jobs, live);
    rows.clear();
    for (size_t j = 0; j < jobs.size(); ++j) {
      Live& l = live[j];
      if (!l.drafting) continue;
      DraftJob& job = jobs[j];
      ++job.result.steps;
      int32_t token = 0;
      try {
        if (!ChooseDraftToken(l.logits.data(), V, job.request, l.history, job.result, token)) {
          l.drafting = false;
          continue;
        }
      } catch (const std::exception& e) {
        job.error = e.what();
        job.result.Clear();
        l.drafting = false;
        l.failed = true;
        continue;
      }
      l.history.push_back(token);
      std::vector<int32_t>& cached = cached_[job.request.seq];
      // (A forced run after this token needs no drafter: the slot appends it for free.)
      if (static_cast<int>(job.result.tokens.size()) >= job.request.n_max ||
          static_cast<int>(cached.size()) + 1 >= cache_->n_ctx() || StopsAtForced(job.request)) {
        l.drafting = false;
        continue;
      }
      rows.push_back(Row{j, token, static_cast<int32_t>(cached.size()), true});
      cached.push_back(token);
    }
    if (rows.empty()) break;
  }
  for (DraftJob& job : jobs) ApplyDraftMin(job.request, job.result);
}

namespace {

std::unique_ptr<Drafter> MakeDraftModelDrafter(const DrafterSources& sources, const DrafterSet&) {
  return std::make_unique<DraftModelDrafter>(*sources.draft_model, sources.target, sources.pool);
}

}  // namespace

// --spec-type draft: a separate, smaller gemma4 model with its own KV cache; what auto means
// with such a model loaded.
constinit const DrafterEntry kDraftModelDrafterEntry = {
    .name = "draft",
    .model = DrafterModel::kSeparate,
    .auto_pick = true,
    .warm_up = true,
    .make = MakeDraftModelDrafter,
};

}  // namespace tandem
