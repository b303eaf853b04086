// Tests for SamplingParams: llama.cpp's defaults and the validation messages.
#include "sampling/sampling_params.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/error.h"

namespace tandem {
namespace {

// Runs validation and returns the error message ("" when valid).
std::string ErrorOf(const SamplingParams& params) {
  try {
    ValidateSamplingParams(params);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kInvalidArgument);
    return error.what();
  }
  return "";
}

TEST(SamplingParamsTest, DefaultsAreLlamaCpps) {
  const SamplingParams params;
  EXPECT_FLOAT_EQ(params.temperature, 0.8f);
  EXPECT_EQ(params.top_k, 40);
  EXPECT_FLOAT_EQ(params.top_p, 0.95f);
  EXPECT_FLOAT_EQ(params.min_p, 0.05f);
  EXPECT_EQ(params.min_keep, 0);
  EXPECT_FLOAT_EQ(params.repeat_penalty, 1.0f);
  EXPECT_EQ(params.repeat_last_n, 64);
  EXPECT_FLOAT_EQ(params.presence_penalty, 0.0f);
  EXPECT_FLOAT_EQ(params.frequency_penalty, 0.0f);
  EXPECT_TRUE(params.logit_bias.empty());
  EXPECT_EQ(params.seed, 0xFFFFFFFFu);
  EXPECT_FALSE(params.greedy());
  EXPECT_EQ(ErrorOf(params), "");
}

TEST(SamplingParamsTest, GreedyAtOrBelowZeroTemperature) {
  SamplingParams params;
  params.temperature = 0.0f;
  EXPECT_TRUE(params.greedy());
  params.temperature = -1.0f;
  EXPECT_TRUE(params.greedy());
  EXPECT_EQ(ErrorOf(params), "");
}

TEST(SamplingParamsTest, NeutralEdgesAreValid) {
  SamplingParams params;
  params.top_k = 0;
  params.top_p = 1.0f;
  params.min_p = 0.0f;
  params.repeat_last_n = -1;
  params.logit_bias = {{.token = 3, .bias = -INFINITY}, {.token = 3, .bias = 2.5f}};
  EXPECT_EQ(ErrorOf(params), "");
  params.min_p = 1.0f;
  EXPECT_EQ(ErrorOf(params), "");
}

TEST(SamplingParamsTest, RejectsEachBadField) {
  const auto check = [](auto edit, const std::string& expected) {
    SamplingParams params;
    edit(params);
    const std::string message = ErrorOf(params);
    EXPECT_NE(message.find(expected), std::string::npos) << "got: " << message;
  };
  check([](SamplingParams& p) { p.top_p = 1.5f; }, "top_p = 1.5 is outside (0, 1]");
  check([](SamplingParams& p) { p.top_p = 0.0f; }, "top_p = 0 is outside (0, 1]");
  check([](SamplingParams& p) { p.top_p = NAN; }, "top_p = nan");
  check([](SamplingParams& p) { p.top_k = -1; }, "top_k = -1 is negative");
  check([](SamplingParams& p) { p.min_p = -0.25f; }, "min_p = -0.25 is outside [0, 1]");
  check([](SamplingParams& p) { p.min_p = 2.0f; }, "min_p = 2 is outside [0, 1]");
  check([](SamplingParams& p) { p.temperature = NAN; }, "temperature = nan");
  check([](SamplingParams& p) { p.temperature = INFINITY; }, "temperature = inf");
  check([](SamplingParams& p) { p.repeat_penalty = 0.0f; }, "repeat_penalty = 0");
  check([](SamplingParams& p) { p.repeat_penalty = -1.0f; }, "repeat_penalty = -1");
  check([](SamplingParams& p) { p.repeat_last_n = -2; }, "repeat_last_n = -2");
  check([](SamplingParams& p) { p.presence_penalty = NAN; }, "presence_penalty = nan");
  check([](SamplingParams& p) { p.frequency_penalty = -INFINITY; }, "frequency_penalty = -inf");
  check([](SamplingParams& p) { p.min_keep = -3; }, "min_keep = -3");
  check(
      [](SamplingParams& p) {
        p.logit_bias = {{.token = 0, .bias = 1.0f}, {.token = -5}};
      },
      "logit_bias[1].token = -5 is negative");
  check([](SamplingParams& p) { p.logit_bias = {{.token = 1, .bias = INFINITY}}; },
        "logit_bias[0].bias = inf must be finite or -inf");
  check([](SamplingParams& p) { p.logit_bias = {{.token = 1, .bias = NAN}}; },
        "logit_bias[0].bias = nan");
}

}  // namespace
}  // namespace tandem
