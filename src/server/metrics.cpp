// Prometheus text format for /metrics.
#include "server/metrics.h"

#include <cstdio>
#include <string_view>
#include <utility>

namespace tandem::server {
namespace {

class Writer {
 public:
  // # HELP and # TYPE lines for one metric family.
  void Family(std::string_view name, std::string_view type, std::string_view help) {
    out_.append("# HELP tandem_").append(name).append(" ").append(help).append("\n");
    out_.append("# TYPE tandem_").append(name).append(" ").append(type).append("\n");
  }
  void Sample(std::string_view name, double value, std::string_view labels = {}) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", value);
    out_.append("tandem_").append(name);
    if (!labels.empty()) out_.append("{").append(labels).append("}");
    out_.append(" ").append(buf).append("\n");
  }
  void One(std::string_view name, std::string_view type, std::string_view help, double value) {
    Family(name, type, help);
    Sample(name, value);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string Label(std::string_view key, const std::string& value) {
  std::string label(key);
  label.append("=\"").append(value).append("\"");
  return label;
}

// Per-slot speculation: each slot's finished requests plus the one it runs, labelled slot="i".
void WriteSlotMetrics(Writer& w, const std::vector<SlotMetrics>& slots) {
  auto per_slot = [&](std::string_view name, std::string_view type, std::string_view help,
                      auto value) {
    w.Family(name, type, help);
    for (size_t i = 0; i < slots.size(); ++i) {
      w.Sample(name, double(value(slots[i])), Label("slot", std::to_string(i)));
    }
  };
  per_slot("slot_busy", "gauge", "1 while the slot runs a request.",
           [](const SlotMetrics& s) { return s.busy ? 1 : 0; });
  per_slot("slot_speculating", "gauge", "1 while the slot's request drafts with the assistant.",
           [](const SlotMetrics& s) { return s.speculating ? 1 : 0; });
  per_slot("slot_requests_total", "counter", "Requests the slot finished.",
           [](const SlotMetrics& s) { return s.requests; });
  per_slot("slot_spec_rounds_total", "counter", "Verification rounds in the slot.",
           [](const SlotMetrics& s) { return s.spec.rounds; });
  per_slot("slot_spec_drafted_tokens_total", "counter", "Draft tokens proposed in the slot.",
           [](const SlotMetrics& s) { return s.spec.drafted; });
  per_slot("slot_spec_accepted_tokens_total", "counter", "Draft tokens accepted in the slot.",
           [](const SlotMetrics& s) { return s.spec.accepted; });
  per_slot("slot_spec_acceptance_rate", "gauge", "Accepted / drafted tokens in the slot.",
           [](const SlotMetrics& s) { return s.spec.AcceptanceRate(); });
  per_slot("slot_spec_tokens_per_target_forward", "gauge",
           "Tokens emitted per target forward in the slot (1 = no gain).",
           [](const SlotMetrics& s) { return s.spec.TokensPerTargetForward(); });
  w.Family("slot_spec_accepted_at_position_total", "counter",
           "Rounds of the slot whose draft position i was accepted.");
  for (size_t i = 0; i < slots.size(); ++i) {
    const std::vector<int64_t>& at = slots[i].spec.accepted_at;
    for (size_t p = 0; p < at.size(); ++p) {
      w.Sample("slot_spec_accepted_at_position_total", double(at[p]),
               Label("slot", std::to_string(i)) + "," + Label("position", std::to_string(p)));
    }
  }
}

}  // namespace

void ResponseCounters::Count(int status) {
  std::lock_guard<std::mutex> lock(mu_);
  ++by_status_[status];
}

std::map<int, int64_t> ResponseCounters::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_status_;
}

std::string PrometheusText(const std::map<int, int64_t>& responses, const EngineMetrics& m) {
  Writer w;
  w.Family("requests_total", "counter", "HTTP responses sent, by status code.");
  for (const auto& [status, n] : responses) {
    w.Sample("requests_total", double(n), Label("status", std::to_string(status)));
  }
  w.Family("engine_requests_total", "counter", "Generation requests by outcome.");
  w.Sample("engine_requests_total", double(m.requests_started), Label("outcome", "started"));
  w.Sample("engine_requests_total", double(m.requests_finished), Label("outcome", "finished"));
  w.Sample("engine_requests_total", double(m.requests_cancelled), Label("outcome", "cancelled"));
  w.Sample("engine_requests_total", double(m.requests_failed), Label("outcome", "failed"));
  w.Sample("engine_requests_total", double(m.requests_rejected), Label("outcome", "rejected"));
  w.One("prompt_tokens_total", "counter", "Prompt tokens of admitted requests.",
        double(m.prompt_tokens));
  w.One("prompt_tokens_cached_total", "counter", "Prompt tokens reused from a slot's KV cache.",
        double(m.cached_prompt_tokens));
  w.One("generated_tokens_total", "counter", "Tokens generated.", double(m.generated_tokens));
  w.One("generate_tokens_per_second", "gauge",
        "Generated tokens per second of engine time spent generating.",
        m.generate_seconds > 0 ? double(m.generated_tokens) / m.generate_seconds : 0.0);
  w.One("queue_depth", "gauge", "Requests waiting for a slot.", m.queue_depth);
  w.One("busy_slots", "gauge", "Slots running a request.", m.busy_slots);
  w.One("slots", "gauge", "Slots (--parallel).", m.n_slots);
  w.One("kv_cache_bytes", "gauge", "Bytes of KV cache allocated.", double(m.kv_bytes));
  w.One("kv_cache_used_positions", "gauge", "KV positions holding tokens, all slots.",
        double(m.kv_used_positions));
  w.One("kv_cache_capacity_positions", "gauge", "KV positions available, all slots.",
        double(m.kv_capacity_positions));
  w.One("kv_cache_usage_ratio", "gauge", "Used / capacity KV positions.",
        m.kv_capacity_positions > 0 ? double(m.kv_used_positions) / double(m.kv_capacity_positions)
                                    : 0.0);
  const SpeculationStats& s = m.spec;
  w.One("spec_rounds_total", "counter", "Speculative verification rounds.", double(s.rounds));
  w.One("spec_plain_steps_total", "counter", "Target steps without drafts.", double(s.plain_steps));
  w.One("spec_probes_total", "counter",
        "Rounds drafted only to look for acceptance (the controller's probes).", double(s.probes));
  w.One("spec_continued_requests_total", "counter",
        "Greedy requests that started from the draft estimates of their slot's previous request.",
        double(s.continued));
  w.One("spec_drafted_tokens_total", "counter", "Draft tokens proposed.", double(s.drafted));
  w.One("spec_accepted_tokens_total", "counter", "Draft tokens accepted.", double(s.accepted));
  w.One("spec_acceptance_rate", "gauge", "Accepted / drafted tokens.", s.AcceptanceRate());
  w.Family("spec_drafted_at_position_total", "counter", "Rounds that drafted position i.");
  for (size_t i = 0; i < s.drafted_at.size(); ++i) {
    w.Sample("spec_drafted_at_position_total", double(s.drafted_at[i]),
             Label("position", std::to_string(i)));
  }
  w.Family("spec_accepted_at_position_total", "counter", "Rounds whose position i was accepted.");
  for (size_t i = 0; i < s.accepted_at.size(); ++i) {
    w.Sample("spec_accepted_at_position_total", double(s.accepted_at[i]),
             Label("position", std::to_string(i)));
  }
  w.Family("spec_acceptance_by_position", "gauge", "Acceptance rate at draft position i.");
  const std::vector<double> by_position = s.AcceptanceByPosition();
  for (size_t i = 0; i < by_position.size(); ++i) {
    w.Sample("spec_acceptance_by_position", by_position[i], Label("position", std::to_string(i)));
  }
  // By draft source: prompt lookup ("ngram"), suffix drafting ("suffix") and the model drafter
  // ("model": MTP or a draft model).
  w.One("spec_forced_tokens_total", "counter",
        "Draft tokens forced by a grammar (drafted without a drafter step).", double(s.forced));
  w.One("spec_forced_accepted_tokens_total", "counter", "Grammar-forced draft tokens accepted.",
        double(s.forced_accepted));
  w.One("spec_tree_rounds_total", "counter", "Rounds that verified a draft tree.",
        double(s.tree_rounds));
  w.One("spec_tree_branch_tokens_total", "counter",
        "Draft tokens of trees beside their trunk (the planned chain).", double(s.tree_branches));
  w.One("spec_tree_branch_accepted_tokens_total", "counter", "Tree branch draft tokens accepted.",
        double(s.tree_branches_accepted));
  w.One("spec_limited_logit_rows_total", "counter",
        "Target rows whose logits were computed only for the few tokens a grammar allowed.",
        double(s.limited_logit_rows));
  w.One("spec_layout_guess_tokens_total", "counter",
        "Draft tokens guessed from the request's own layout where a grammar left a choice "
        "(drafted without a drafter step).",
        double(s.guessed));
  w.One("spec_layout_guess_accepted_tokens_total", "counter", "Layout-guess draft tokens accepted.",
        double(s.guessed_accepted));
  // ... and by source: prompt lookup, suffix drafting, the model drafter, the grammar (forced and
  // guessed drafts).
  const auto sources = s.Sources();
  w.Family("spec_source_drafted_tokens_total", "counter", "Draft tokens proposed, by source.");
  for (const auto& [name, src] : sources) {
    w.Sample("spec_source_drafted_tokens_total", double(src->drafted), Label("source", name));
  }
  w.Family("spec_source_accepted_tokens_total", "counter", "Draft tokens accepted, by source.");
  for (const auto& [name, src] : sources) {
    w.Sample("spec_source_accepted_tokens_total", double(src->accepted), Label("source", name));
  }
  w.Family("spec_source_acceptance_by_position", "gauge",
           "Acceptance rate at position i of the source's part of the draft.");
  for (const auto& [name, src] : sources) {
    const std::vector<double> at = src->AcceptanceByPosition();
    for (size_t i = 0; i < at.size(); ++i) {
      w.Sample("spec_source_acceptance_by_position", at[i],
               Label("source", name) + "," + Label("position", std::to_string(i)));
    }
  }
  // What speculating slots did by the count of generating slots in a step: how speculation
  // behaves as the batch grows (it should draft less where verify rows stop being cheap).
  w.Family("spec_batch_slot_steps_total", "counter",
           "Steps of speculating slots, by generating slots in the step and whether the step "
           "verified drafts (draft) or decoded plainly (plain).");
  for (size_t n = 1; n < m.spec_by_batch.size(); ++n) {
    const EngineMetrics::BatchChoices& c = m.spec_by_batch[n];
    if (c.drafting + c.plain == 0) continue;
    const std::string batch = Label("generating", std::to_string(n));
    w.Sample("spec_batch_slot_steps_total", double(c.drafting),
             batch + "," + Label("choice", "draft"));
    w.Sample("spec_batch_slot_steps_total", double(c.plain),
             batch + "," + Label("choice", "plain"));
  }
  w.Family(
      "spec_batch_drafted_tokens_total", "counter",
      "Draft tokens verified (grammar-forced ones included), by generating slots in the step.");
  for (size_t n = 1; n < m.spec_by_batch.size(); ++n) {
    const EngineMetrics::BatchChoices& c = m.spec_by_batch[n];
    if (c.drafting + c.plain == 0) continue;
    w.Sample("spec_batch_drafted_tokens_total", double(c.drafted_tokens),
             Label("generating", std::to_string(n)));
  }
  WriteSlotMetrics(w, m.slots);
  return w.Take();
}

}  // namespace tandem::server
