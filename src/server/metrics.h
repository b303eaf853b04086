// Prometheus text exposition of the server's counters (HTTP responses by status) and the
// engine's metrics (tokens, throughput, queue, slots, KV use, speculative decoding).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "engine/engine.h"

namespace tandem::server {

// HTTP responses by status code. Thread-safe.
class ResponseCounters {
 public:
  void Count(int status);
  std::map<int, int64_t> Snapshot() const;

 private:
  mutable std::mutex mu_;
  std::map<int, int64_t> by_status_;  // GUARDED_BY(mu_)
};

// The /metrics body (text/plain; version=0.0.4). Metric names start with "tandem_":
// requests_total{status}, engine_requests_total{outcome}, prompt_tokens_total,
// prompt_tokens_cached_total, generated_tokens_total, generate_tokens_per_second, queue_depth,
// busy_slots, slots, kv_cache_bytes, kv_cache_used_positions, kv_cache_capacity_positions,
// kv_cache_usage_ratio, spec_rounds_total, spec_plain_steps_total, spec_drafted_tokens_total,
// spec_accepted_tokens_total, spec_acceptance_rate, spec_drafted_at_position_total{position},
// spec_accepted_at_position_total{position}, spec_acceptance_by_position{position},
// spec_source_drafted_tokens_total{source}, spec_source_accepted_tokens_total{source},
// spec_forced_tokens_total, spec_forced_accepted_tokens_total,
// spec_layout_guess_tokens_total, spec_layout_guess_accepted_tokens_total,
// spec_source_acceptance_by_position{source,position} (source: ngram, suffix,
// model, grammar).
std::string PrometheusText(const std::map<int, int64_t>& responses, const EngineMetrics& engine);

}  // namespace tandem::server
