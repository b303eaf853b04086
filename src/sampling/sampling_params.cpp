// Validation of SamplingParams: every bad field becomes an Error naming the field and value.
#include "sampling/sampling_params.h"

#include <cmath>
#include <string>

#include "base/error.h"

namespace tandem {
namespace {

std::string Num(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  std::string text = std::to_string(value);
  // to_string prints six decimals; trim trailing zeros ("1.500000" -> "1.5").
  while (text.size() > 1 && text.back() == '0') text.pop_back();
  if (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

[[noreturn]] void Bad(const std::string& field, double value, const std::string& rule) {
  Fail(ErrorKind::kInvalidArgument, "sampling: " + field + " = " + Num(value) + " " + rule);
}

}  // namespace

void ValidateSamplingParams(const SamplingParams& params) {
  if (std::isnan(params.temperature) || std::isinf(params.temperature)) {
    Bad("temperature", params.temperature, "is not a finite number (<= 0 means greedy)");
  }
  if (params.top_k < 0) Bad("top_k", params.top_k, "is negative (0 turns top-k off)");
  if (!(params.top_p > 0.0f && params.top_p <= 1.0f)) {
    Bad("top_p", params.top_p, "is outside (0, 1] (1 turns top-p off)");
  }
  if (!(params.min_p >= 0.0f && params.min_p <= 1.0f)) {
    Bad("min_p", params.min_p, "is outside [0, 1] (0 turns min-p off)");
  }
  if (params.min_keep < 0) Bad("min_keep", params.min_keep, "is negative");
  if (!(params.repeat_penalty > 0.0f) || std::isinf(params.repeat_penalty)) {
    Bad("repeat_penalty", params.repeat_penalty, "is not a positive finite number (1 is off)");
  }
  if (params.repeat_last_n < -1) {
    Bad("repeat_last_n", params.repeat_last_n, "is below -1 (-1 = whole history, 0 = off)");
  }
  if (!std::isfinite(params.presence_penalty)) {
    Bad("presence_penalty", params.presence_penalty, "is not a finite number");
  }
  if (!std::isfinite(params.frequency_penalty)) {
    Bad("frequency_penalty", params.frequency_penalty, "is not a finite number");
  }
  for (size_t i = 0; i < params.logit_bias.size(); ++i) {
    const LogitBias& entry = params.logit_bias[i];
    const std::string field = "logit_bias[" + std::to_string(i) + "]";
    if (entry.token < 0) Bad(field + ".token", entry.token, "is negative");
    // -inf bans the token; +inf or NaN would make the distribution undefined.
    if (std::isnan(entry.bias) || entry.bias == INFINITY) {
      Bad(field + ".bias", entry.bias, "must be finite or -inf (to ban the token)");
    }
  }
}

}  // namespace tandem
