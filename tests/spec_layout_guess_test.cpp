// Layout guesses (issue 16; speculative/layout_guesses.h): where the grammar leaves a choice, the
// choice the request's model made there the last two times is drafted for free and verified.
// Greedy output stays byte-identical to plain constrained decoding for every draft length and
// drafter, the guesses are made and counted apart from forced drafts; sampled output keeps the
// exact constrained distribution (chi-square against the one computed from plain forwards).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/thread_pool.h"
#include "chi_square.h"
#include "engine/generator.h"
#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"
#include "greedy_params.h"
#include "sampling/sampler.h"
#include "spec_grammar_pair.h"
#include "speculative/loaded_drafters.h"

namespace tandem {
namespace {

// Twelve items, each a free layout ("ab" written whole or as "a" "b", then up to three spaces or
// newlines before the ','): choices the random target's argmax repeats at the same allowed set
// after the same token.
const char kItemsGbnf[] = R"(root ::= ("ab" [ \n]{0,3} ","){12} ".")";

TEST(SpecLayoutGuess, GreedyOutputIsIdenticalAndTheGuessesAreCountedApart) {
  Pair pair = MakePair("slg_greedy");
  auto vocab = TestVocabulary(pair.target->config().n_vocab);
  auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(kItemsGbnf), vocab);
  std::vector<int32_t> prompt;
  for (int i = 0; i < 12; ++i) prompt.push_back(2 + (i * 53) % 500);
  ThreadPool pools[] = {ThreadPool(1), ThreadPool(2)};
  GenerateParams plain = Greedy(80, SpecType::kNone, 0, false);
  plain.eog_tokens = {kEog};
  plain.grammar.grammar = compiled;
  Generator g0(*pair.target, {}, pools[0], {.type = TensorType::kF32, .n_ctx = 160});
  const GenerateResult want = g0.Generate(prompt, plain, nullptr);
  EXPECT_EQ(want.spec.guessed, 0) << "no guesses without speculation";
  GrammarMatcher m(compiled);
  ASSERT_TRUE(m.AcceptBytes(Text(*vocab, want.tokens)));
  std::printf("plain: %s\n", Text(*vocab, want.tokens).c_str());
  int64_t guessed = 0, guessed_accepted = 0;
  for (const SpecType type : {SpecType::kMtp, SpecType::kNgram}) {
    for (int draft_max = 1; draft_max <= 8; draft_max += 3) {
      for (int threads = 1; threads <= 2; ++threads) {
        ThreadPool& pool = pools[threads - 1];
        Generator gen(*pair.target,
                      MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pool}), pool,
                      {.type = TensorType::kF32, .n_ctx = 160});
        GenerateParams p = Greedy(80, type, draft_max, false);
        p.eog_tokens = {kEog};
        p.grammar.grammar = compiled;
        const GenerateResult r = gen.Generate(prompt, p, nullptr);
        EXPECT_EQ(r.tokens, want.tokens)
            << SpecTypeName(type) << " draft_max " << draft_max << " threads " << threads;
        EXPECT_LE(r.spec.guessed_accepted, r.spec.guessed);
        EXPECT_LE(r.spec.forced_accepted, r.spec.forced);
        EXPECT_LE(r.spec.grammar.accepted, r.spec.forced_accepted + r.spec.guessed_accepted);
        guessed += r.spec.guessed;
        guessed_accepted += r.spec.guessed_accepted;
      }
    }
  }
  std::printf("%lld layout guesses over 12 runs, %lld accepted\n", static_cast<long long>(guessed),
              static_cast<long long>(guessed_accepted));
  EXPECT_GT(guessed_accepted, 12) << "the repeated layout must be guessed and accepted";
}

// Sampled: "x" then a letter, three times. The letters are free choices at the same allowed set
// after the same token, so once the first two letters agree the third is guessed (a point mass
// verified with probability p(letter)). The joint distribution of the three letters matches the
// exact one from plain forwards under lookup (plain steps: guesses in place of them) and MTP (the
// drafter drafts at the choice, guesses follow its drafts).
TEST(SpecLayoutGuess, SampledOutputKeepsTheConstrainedDistribution) {
  Pair pair = MakePair("slg_sampled");
  const int V = pair.target->config().n_vocab;
  auto vocab = TestVocabulary(V);
  auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(R"(root ::= ("x" [a-d]){3})"), vocab);
  const int32_t x = 2 + 'x' - 32;
  std::vector<int32_t> letters;
  for (const char c : std::string("abcd")) letters.push_back(2 + c - 32);
  const std::vector<int32_t> prompt = {2, 310, 311, 312, 313};
  // The six, then the end (room for the guess in the last round).
  GenerateParams params = SampledConstrained(compiled, 7, 3);
  ThreadPool pool(1);
  Sampler sampler(params.sampling);
  auto masked = [&](const std::vector<int32_t>& tokens) {
    const std::vector<float> row = LastRowLogits(pair, tokens, pool);
    std::vector<float> logits(V, -INFINITY);
    for (const int32_t t : letters) logits[t] = row[t];
    return sampler.Distribution(logits.data(), V, tokens);
  };
  const int kRuns = 4000, n_bins = 4 * 4 * 4;
  std::vector<double> expected(n_bins, 0.0);
  std::vector<int32_t> t2(prompt);
  t2.push_back(x);
  const std::vector<float> p2 = masked(t2);
  for (int a = 0; a < 4; ++a) {
    std::vector<int32_t> t4(t2);
    t4.insert(t4.end(), {letters[a], x});
    const std::vector<float> p4 = masked(t4);
    for (int b = 0; b < 4; ++b) {
      std::vector<int32_t> t6(t4);
      t6.insert(t6.end(), {letters[b], x});
      const std::vector<float> p6 = masked(t6);
      for (int c = 0; c < 4; ++c) {
        expected[(a * 4 + b) * 4 + c] =
            double(p2[letters[a]]) * p4[letters[b]] * p6[letters[c]] * kRuns;
      }
    }
  }
  auto index = [&](int32_t t) {
    return static_cast<int>(std::find(letters.begin(), letters.end(), t) - letters.begin());
  };
  for (const SpecType type : {SpecType::kNgram, SpecType::kMtp}) {
    SCOPED_TRACE(SpecTypeName(type));
    params.spec.type = type;
    Generator gen(*pair.target, MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pool}),
                  pool, {.type = TensorType::kF32, .n_ctx = 64});
    std::vector<int> observed(n_bins, 0);
    int64_t guessed = 0, guessed_accepted = 0;
    for (int seed = 0; seed < kRuns; ++seed) {
      params.sampling.seed = static_cast<uint32_t>(seed);
      const GenerateResult r = gen.Generate(prompt, params, nullptr);
      ASSERT_GE(r.tokens.size(), 6u);
      const int a = index(r.tokens[1]), b = index(r.tokens[3]), c = index(r.tokens[5]);
      ASSERT_TRUE(a < 4 && b < 4 && c < 4) << Text(*vocab, r.tokens);
      ++observed[(a * 4 + b) * 4 + c];
      guessed += r.spec.guessed;
      guessed_accepted += r.spec.guessed_accepted;
    }
    // Both branches of the point-mass test: guesses accepted and rejected.
    EXPECT_GT(guessed_accepted, 50);
    EXPECT_LT(guessed_accepted, guessed - 50);
    const ChiSquareFit fit = FitChiSquare(expected, observed);
    EXPECT_EQ(fit.impossible_seen, -1);
    ASSERT_GE(fit.bins, 20);
    std::printf("%s: %d runs over %d bins: chi2 %.1f, z %.2f; %lld guesses, %lld accepted\n",
                SpecTypeName(type), kRuns, fit.bins, fit.chi2, fit.z,
                static_cast<long long>(guessed), static_cast<long long>(guessed_accepted));
    EXPECT_LT(fit.z, 4.0) << "constrained output does not follow the masked distribution";
  }
}

}  // namespace
}  // namespace tandem
