#include "cli/generation_report.h"

#include <cstdio>
#include <utility>

#include "base/stopwatch.h"

namespace tandem::cli {
namespace {

std::string Mib(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / 1048576.0);
  return buf;
}

}  // namespace

nlohmann::json GenerationJson(const std::string& text, const GenerateResult& r,
                              const LoadedModels& m, size_t kv_bytes) {
  const int prompt_evaluated = r.prompt_tokens - r.cached_prompt_tokens;
  nlohmann::json j;
  j["text"] = text;
  j["tokens"] = r.tokens;
  j["stop_reason"] = StopReasonName(r.stop_reason);
  j["timings"] = {
      {"load_ms", m.load_ms},
      {"prompt_n", r.prompt_tokens},
      {"prompt_cached", r.cached_prompt_tokens},
      {"prompt_ms", r.prompt_ms},
      {"image_encode_ms", r.media_encode_ms - r.audio_encode_ms},
      {"audio_encode_ms", r.audio_encode_ms},
      {"prompt_per_second", PerSecond(prompt_evaluated, r.prompt_ms)},
      {"predicted_n", r.tokens.size()},
      {"predicted_ms", r.generate_ms},
      {"predicted_per_second", PerSecond(static_cast<double>(r.tokens.size()), r.generate_ms)},
  };
  j["memory"] = {
      {"weights_mapped_bytes", m.mapped_bytes},
      {"kv_bytes", kv_bytes},
      {"resident_bytes", ResidentBytes()},
  };
  nlohmann::json spec = r.spec.ToJson();
  spec["type"] = SpecTypeName(m.spec.type);
  spec["enabled"] = m.spec.type != SpecType::kNone;
  j["speculative"] = spec;
  return j;
}

std::string GenerationSummary(const GenerateResult& r, const LoadedModels& m, size_t kv_bytes) {
  char buf[1024];
  std::string s;
  const int evaluated = r.prompt_tokens - r.cached_prompt_tokens;
  std::snprintf(buf, sizeof buf,
                "load: %.0f ms\nprompt: %d tokens (%d cached) in %.1f ms, %.1f tok/s\n"
                "generated: %zu tokens in %.1f ms, %.2f tok/s (stop: %s)\n",
                m.load_ms, r.prompt_tokens, r.cached_prompt_tokens, r.prompt_ms,
                PerSecond(evaluated, r.prompt_ms), r.tokens.size(), r.generate_ms,
                PerSecond(static_cast<double>(r.tokens.size()), r.generate_ms),
                StopReasonName(r.stop_reason));
  s += buf;
  if (r.media_encode_ms - r.audio_encode_ms > 0) {
    std::snprintf(buf, sizeof buf, "images encoded in %.1f ms (within the prompt time)\n",
                  r.media_encode_ms - r.audio_encode_ms);
    s += buf;
  }
  if (r.audio_encode_ms > 0) {
    std::snprintf(buf, sizeof buf, "audio encoded in %.1f ms (within the prompt time)\n",
                  r.audio_encode_ms);
    s += buf;
  }
  s += "memory: weights mapped " + Mib(m.mapped_bytes) + ", KV " + Mib(kv_bytes) + ", resident " +
       Mib(ResidentBytes()) + "\n";
  if (m.spec.type == SpecType::kNone && r.spec.forced > 0) {
    std::snprintf(buf, sizeof buf,
                  "grammar-forced tokens verified in batches (jump-forward, no speculation): %lld "
                  "in %lld rounds + %lld plain steps, %.2f tokens per target forward\n",
                  static_cast<long long>(r.spec.forced), static_cast<long long>(r.spec.rounds),
                  static_cast<long long>(r.spec.plain_steps), r.spec.TokensPerTargetForward());
    s += buf;
  }
  if (r.spec.tree_rounds > 0) {
    std::snprintf(buf, sizeof buf,
                  "draft trees: %lld rounds, %lld branch drafts beside the trunks, %lld accepted\n",
                  static_cast<long long>(r.spec.tree_rounds),
                  static_cast<long long>(r.spec.tree_branches),
                  static_cast<long long>(r.spec.tree_branches_accepted));
    s += buf;
  }
  if (r.spec.limited_logit_rows > 0) {
    std::snprintf(buf, sizeof buf,
                  "constraint: %lld target rows computed logits for the grammar's few allowed "
                  "tokens only\n",
                  static_cast<long long>(r.spec.limited_logit_rows));
    s += buf;
  }
  if (m.spec.type != SpecType::kNone) {
    const SpeculationStats& st = r.spec;
    std::snprintf(buf, sizeof buf,
                  "speculative (%s): %lld rounds (%lld probes) + %lld plain steps, drafted %lld, "
                  "accepted %lld "
                  "(%.1f%%), mean accepted length %.2f, %.2f tokens per target forward\n"
                  "  time: plan %.1f ms, draft %.1f ms, verify %.1f ms, other %.1f ms; repetition "
                  "share %.1f%%; "
                  "estimated speedup %s%.2fx\n"
                  "  acceptance by draft position:",
                  SpecTypeName(m.spec.type), static_cast<long long>(st.rounds),
                  static_cast<long long>(st.probes), static_cast<long long>(st.plain_steps),
                  static_cast<long long>(st.drafted), static_cast<long long>(st.accepted),
                  100.0 * st.AcceptanceRate(), st.MeanAcceptedLength(), st.TokensPerTargetForward(),
                  st.plan_ms, st.draft_ms, st.verify_ms, st.other_ms,
                  st.accepted ? 100.0 * st.repetition_accepted / double(st.accepted) : 0.0,
                  st.SpeedupIsUpperBound() ? "<= " : "", st.EstimatedSpeedup());
    s += buf;
    auto positions = [&](const std::vector<double>& rates) {
      for (double a : rates) {
        std::snprintf(buf, sizeof buf, " %.2f", a);
        s += buf;
      }
      s += "\n";
    };
    positions(st.AcceptanceByPosition());
    for (const auto& [name, src] : st.Sources()) {
      // The grammar's drafts have their own lines below.
      if (src->drafted == 0 || src == &st.grammar) continue;
      std::snprintf(buf, sizeof buf,
                    "  %s: drafted %lld, accepted %lld (%.1f%%); by position:", name,
                    static_cast<long long>(src->drafted), static_cast<long long>(src->accepted),
                    100.0 * double(src->accepted) / double(src->drafted));
      s += buf;
      positions(src->AcceptanceByPosition());
    }
    s += "\n";
    if (st.forced > 0) {
      std::snprintf(buf, sizeof buf,
                    "  grammar-forced drafts (no drafter step): %lld, accepted %lld\n",
                    static_cast<long long>(st.forced), static_cast<long long>(st.forced_accepted));
      s += buf;
    }
    if (st.guessed > 0) {
      std::snprintf(buf, sizeof buf,
                    "  layout guesses (where the grammar left a choice; no drafter step): %lld, "
                    "accepted %lld\n",
                    static_cast<long long>(st.guessed),
                    static_cast<long long>(st.guessed_accepted));
      s += buf;
    }
    if (st.grammar.drafted > 0) {
      std::snprintf(buf, sizeof buf,
                    "  grammar drafts verification reached: %lld, accepted %lld (%.1f%%)\n",
                    static_cast<long long>(st.grammar.drafted),
                    static_cast<long long>(st.grammar.accepted), 100.0 * st.ForcedAcceptanceRate());
      s += buf;
    }
  }
  return s;
}

}  // namespace tandem::cli
