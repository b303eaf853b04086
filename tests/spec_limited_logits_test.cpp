// Under a grammar, rows whose allowed tokens are few compute logits for those tokens only (the
// head's rows gathered, ForwardBatch::logit_tokens; SpeculativeRound::LimitedLogitTokens). The
// output is the same tokens, with the same random stream, as with every row's full logits, for
// plain decoding and speculation, greedy and sampled; and a model asked for a few tokens' logits
// gives the bits of its full row at those tokens and -inf elsewhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"
#include "greedy_params.h"
#include "spec_grammar_pair.h"

namespace tandem {
namespace {

// Short free words (a few allowed tokens each) between forced runs, and a free digit run.
const char kRecordGbnf[] =
    R"(root ::= "{\"name\": \"" [a-z]{1,6} "\", \"size\": " [0-9]{1,5} ", \"ok\": " ("true" | "false") "}")";

PairRun RunOnEngine(const Pair& pair, ThreadPool& pool, const GenerateParams& params) {
  std::vector<int32_t> prompt;
  for (int i = 0; i < 10; ++i) prompt.push_back(2 + (i * 41) % 500);
  return RunOnPair(pair, pool, prompt, params);
}

TEST(SpecLimitedLogits, SameOutputWithTheGrammarsFewTokensOnly) {
  Pair pair = MakePair("sll_same");
  auto vocab = TestVocabulary(pair.target->config().n_vocab);
  auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(kRecordGbnf), vocab);
  ThreadPool pool(2);
  for (const SpecType type : {SpecType::kNone, SpecType::kMtp, SpecType::kNgram}) {
    for (const float temperature : {0.0f, 1.0f}) {
      SCOPED_TRACE(std::string(SpecTypeName(type)) + " temperature " + std::to_string(temperature));
      GenerateParams limited = Greedy(60, type, 8, true);
      limited.eog_tokens = {kEog};
      limited.grammar.grammar = compiled;
      limited.sampling.temperature = temperature;
      limited.sampling.seed = 11;
      GenerateParams full = limited;
      full.limit_constrained_logits = false;
      const PairRun a = RunOnEngine(pair, pool, limited), b = RunOnEngine(pair, pool, full);
      EXPECT_EQ(a.error, "");
      EXPECT_EQ(b.error, "");
      EXPECT_GT(a.spec.limited_logit_rows, 5);
      EXPECT_EQ(b.spec.limited_logit_rows, 0);
      EXPECT_GT(a.tokens.size(), 10u);
      EXPECT_EQ(a.tokens, b.tokens);
    }
  }
}

TEST(SpecLimitedLogits, GatheredLogitsAreTheFullRowsBits) {
  Pair pair = MakePair("sll_bits");
  ThreadPool pool(2);
  const int n_vocab = pair.target->config().n_vocab;
  const std::vector<int32_t> prompt = {5, 9, 17, 33, 2, 70};
  const std::vector<int32_t> few = {3, 64, 65, 66, n_vocab - 1};
  auto run = [&](bool limited, ForwardOutput& out) {
    auto cache = pair.target->NewKvCache(
        {.type = TensorType::kF32, .n_ctx = 64, .n_seq = 1, .max_batch = 16});
    ForwardBatch batch;
    for (size_t i = 0; i < prompt.size(); ++i) {
      // Rows 2 and 5 limited, row 3 full, the others without logits.
      const bool logits = i == 2 || i == 3 || i == 5;
      batch.Add(prompt[i], static_cast<int32_t>(i), 0, logits,
                limited && logits && i != 3 ? few : std::vector<int32_t>{});
    }
    pair.target->Forward(batch, *cache, out, pool);
  };
  ForwardOutput full, limited;
  run(false, full);
  run(true, limited);
  ASSERT_EQ(full.logit_rows, limited.logit_rows);
  for (int i = 0; i < 3; ++i) {
    const float* a = full.Logits(i);
    const float* b = limited.Logits(i);
    if (i == 1) {  // batch row 3: every token
      EXPECT_EQ(std::memcmp(a, b, n_vocab * sizeof(float)), 0);
      continue;
    }
    for (int t = 0; t < n_vocab; ++t) {
      const bool wanted = std::find(few.begin(), few.end(), t) != few.end();
      if (wanted) {
        EXPECT_EQ(std::memcmp(&a[t], &b[t], sizeof(float)), 0) << "row " << i << " token " << t;
      } else {
        EXPECT_EQ(b[t], -std::numeric_limits<float>::infinity()) << "row " << i << " token " << t;
      }
    }
  }
  // A token outside the vocabulary is refused before any work.
  auto cache =
      pair.target->NewKvCache({.type = TensorType::kF32, .n_ctx = 64, .n_seq = 1, .max_batch = 16});
  ForwardBatch bad;
  bad.Add(5, 0, 0, true, {n_vocab});
  ForwardOutput out;
  EXPECT_THROW(pair.target->Forward(bad, *cache, out, pool), Error);
  EXPECT_EQ(cache->Length(0), 0);
}

}  // namespace
}  // namespace tandem
