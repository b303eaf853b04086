// Rows that verify a grammar-forced draft compute no logits
// (SpeculativeRound::ForcedWithoutLogits): the grammar allows that token alone, so the masked
// distribution is a point mass on it; without speculation the forced runs are still verified in
// batches (jump-forward decoding). What still needs those logits keeps them: a request asking for
// logprobs gets the same bitwise logprobs for every token as plain decoding, and a request whose
// logit bias bans the token the grammar forces fails as it does without speculation (every token it
// allows there is banned).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/thread_pool.h"
#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"
#include "greedy_params.h"
#include "spec_grammar_pair.h"

namespace tandem {
namespace {

// Long forced runs ("function", the keys and their separators) between short free words.
const char kRecordGbnf[] =
    R"(root ::= "{\"name\": \"" [a-z]{1,4} "\", \"kind\": \"function\", \"path\": \"" [a-z]{1,4} "\"}")";

PairRun RunOnEngine(const Pair& pair, ThreadPool& pool, const GenerateParams& params) {
  std::vector<int32_t> prompt;
  for (int i = 0; i < 10; ++i) prompt.push_back(2 + (i * 37) % 500);
  return RunOnPair(pair, pool, prompt, params);
}

int64_t Forwards(const PairRun& r) {  // target forwards: drafting rounds + plain steps
  return r.spec.rounds + r.spec.plain_steps;
}

GenerateParams Constrained(std::shared_ptr<CompiledGrammar> grammar, SpecType type) {
  GenerateParams p = Greedy(60, type, 8, false);
  p.eog_tokens = {kEog};
  p.grammar.grammar = std::move(grammar);
  return p;
}

TEST(SpecForcedRows, LogprobsOfForcedTokensAreThoseOfPlainDecoding) {
  Pair pair = MakePair("sfr_logprobs");
  auto vocab = TestVocabulary(pair.target->config().n_vocab);
  auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(kRecordGbnf), vocab);
  ThreadPool pool(2);
  GenerateParams plain = Constrained(compiled, SpecType::kNone);
  plain.spec.draft_max = 0;  // one token per forward: no forced runs in batches either
  plain.top_logprobs = 3;
  const PairRun want = RunOnEngine(pair, pool, plain);
  ASSERT_EQ(want.error, "");
  ASSERT_GT(want.tokens.size(), 30u);
  EXPECT_EQ(want.spec.forced, 0);
  for (const SpecType type : {SpecType::kNone, SpecType::kMtp, SpecType::kNgram}) {
    GenerateParams p = Constrained(compiled, type);
    p.top_logprobs = 3;
    const PairRun got = RunOnEngine(pair, pool, p);
    EXPECT_EQ(got.error, "") << SpecTypeName(type);
    EXPECT_GT(got.spec.forced, 10) << SpecTypeName(type) << ": forced runs must be drafted";
    EXPECT_EQ(got.tokens, want.tokens) << SpecTypeName(type);
    EXPECT_EQ(got.missing_logprobs, 0) << SpecTypeName(type);
    ASSERT_EQ(got.logprobs.size(), want.logprobs.size()) << SpecTypeName(type);
    for (size_t i = 0; i < got.logprobs.size(); ++i) {
      EXPECT_EQ(got.logprobs[i].chosen.token, want.logprobs[i].chosen.token);
      EXPECT_EQ(got.logprobs[i].chosen.logprob, want.logprobs[i].chosen.logprob)
          << SpecTypeName(type) << i;
      ASSERT_EQ(got.logprobs[i].top.size(), want.logprobs[i].top.size());
      for (size_t j = 0; j < got.logprobs[i].top.size(); ++j) {
        EXPECT_EQ(got.logprobs[i].top[j].token, want.logprobs[i].top[j].token);
        EXPECT_EQ(got.logprobs[i].top[j].logprob, want.logprobs[i].top[j].logprob);
      }
    }
  }
}

TEST(SpecForcedRows, WithoutSpeculationForcedRunsAreBatchedAndChangeNoOutput) {
  // Jump-forward decoding: --spec-type none still verifies the grammar's forced runs in one
  // forward (they are its only choices), greedy and sampled, with the same output and random
  // stream as one token per forward (draft_max 0).
  Pair pair = MakePair("sfr_none");
  auto vocab = TestVocabulary(pair.target->config().n_vocab);
  auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(kRecordGbnf), vocab);
  ThreadPool pool(2);
  for (const float temperature : {0.0f, 1.0f}) {
    GenerateParams batched = Constrained(compiled, SpecType::kNone);
    batched.sampling.temperature = temperature;
    batched.sampling.seed = 7;
    GenerateParams single = batched;
    single.spec.draft_max = 0;
    const PairRun a = RunOnEngine(pair, pool, batched), b = RunOnEngine(pair, pool, single);
    EXPECT_EQ(a.error, "");
    EXPECT_GT(a.spec.forced, 10) << "temperature " << temperature;
    EXPECT_EQ(b.spec.forced, 0);
    EXPECT_LT(Forwards(a), Forwards(b)) << "temperature " << temperature;
    EXPECT_EQ(a.tokens, b.tokens) << "temperature " << temperature;
  }
}

TEST(SpecForcedRows, ABannedForcedTokenFailsWithAndWithoutSpeculation) {
  Pair pair = MakePair("sfr_banned");
  auto vocab = TestVocabulary(pair.target->config().n_vocab);
  auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(kRecordGbnf), vocab);
  ThreadPool pool(2);
  // 'u' occurs only in "function": where the grammar forces it, no allowed token is finite.
  const int32_t u = 2 + 'u' - 32;
  ASSERT_EQ(vocab->piece(u), "u");
  const GenerateParams free_run = Constrained(compiled, SpecType::kMtp);
  ASSERT_EQ(RunOnEngine(pair, pool, free_run).error, "");
  std::string plain_error;
  for (const SpecType type : {SpecType::kNone, SpecType::kMtp, SpecType::kNgram}) {
    GenerateParams p = Constrained(compiled, type);
    p.sampling.logit_bias.push_back({u, -INFINITY});
    const PairRun o = RunOnEngine(pair, pool, p);
    EXPECT_NE(o.error.find("every token is banned"), std::string::npos)
        << SpecTypeName(type) << ": " << o.error;
    if (type == SpecType::kNone) plain_error = o.error;
    EXPECT_EQ(o.error, plain_error) << SpecTypeName(type);
    const std::string text = Text(*vocab, o.tokens);
    EXPECT_EQ(text.find("fu"), std::string::npos) << SpecTypeName(type) << ": " << text;
  }
}

}  // namespace
}  // namespace tandem
