// Per-request timings and speculative statistics as JSON.
#include "server/timings.h"

#include "base/stopwatch.h"

namespace tandem::server {
namespace {

double PerToken(double ms, double n) {
  return n > 0 ? ms / n : 0.0;
}

}  // namespace

Json TimingsJson(const GenerationTotals& totals, const SpecOptions& spec) {
  const GenerateResult& r = totals.result;
  const double evaluated = totals.prompt_tokens - totals.cached_prompt_tokens;
  const double predicted = totals.completion_tokens;
  Json speculative = r.spec.ToJson();
  speculative["enabled"] = spec.type != SpecType::kNone;
  speculative["type"] = SpecTypeName(spec.type);
  speculative["draft_max"] = spec.type != SpecType::kNone ? spec.draft_max : 0;
  Json timings = {
      {"prompt_n", totals.prompt_tokens},
      {"cache_n", totals.cached_prompt_tokens},
      {"prompt_ms", r.prompt_ms},
      {"prompt_per_token_ms", PerToken(r.prompt_ms, evaluated)},
      {"prompt_per_second", PerSecond(evaluated, r.prompt_ms)},
      {"predicted_n", totals.completion_tokens},
      {"predicted_ms", r.generate_ms},
      {"predicted_per_token_ms", PerToken(r.generate_ms, predicted)},
      {"predicted_per_second", PerSecond(predicted, r.generate_ms)},
      {"draft_n", r.spec.drafted},
      {"draft_n_accepted", r.spec.accepted},
      {"speculative", speculative},
  };
  // Requests with media: the encodes this request ran (0 when every item came from a cache).
  if (r.prompt_media > r.prompt_audio) {
    timings["image_encode_ms"] = r.media_encode_ms - r.audio_encode_ms;
  }
  if (r.prompt_audio > 0) timings["audio_encode_ms"] = r.audio_encode_ms;
  return timings;
}

Json LiveTimingsJson(const LiveSpec& live) {
  if (!live.changed) return nullptr;
  Json speculative = live.stats.ToJson();
  speculative["draft_rounds"] = live.new_rounds;
  return {{"predicted_n", live.stats.generated}, {"speculative", speculative}};
}

}  // namespace tandem::server
