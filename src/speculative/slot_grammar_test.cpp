// SlotGrammar's masks (a word of the allowed set at a time, checked against a bit-by-bit
// reference) and its layout guesses (speculative/layout_guesses.h): where the grammar leaves a
// choice, the choice the model made there the last two times is drafted after the committed tokens,
// keyed by the allowed set and the previous token's last byte, so a layout seen after two different
// keys is guessed after a third.
#include "speculative/slot_grammar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "grammar/compiled_grammar.h"
#include "grammar/gbnf_parser.h"
#include "grammar/token_vocabulary.h"

namespace tandem {
namespace {

// Token ids of the vocabulary below.
constexpr int32_t kEos = 0, kKeyA = 1, kKeyB = 2, kKeyC = 3, kColon = 4, kNewline = 5, kValue = 6;

// Three items `k?"`, an optional newline, `:`, `v,`: after each key token the grammar allows a
// newline or the colon (a choice), then forces the rest of the item.
std::shared_ptr<CompiledGrammar> ItemsGrammar() {
  std::vector<std::string> pieces = {"<eos>", "ka\"", "kb\"", "kc\"", ":", "\n", "v,"};
  std::vector<uint8_t> matchable = {0, 1, 1, 1, 1, 1, 1};
  auto vocab =
      std::make_shared<const TokenVocabulary>(pieces, matchable, std::vector<int32_t>{kEos});
  return std::make_shared<CompiledGrammar>(
      ParseGbnf(R"(root ::= ("k" [abc] "\"" "\n"? ":" "v,"){3})"), vocab);
}

class SlotGrammarLayout : public ::testing::Test {
 protected:
  SlotGrammarLayout() : grammar_({.grammar = ItemsGrammar()}, 7) {}

  // The engine's order for an emitted token: the committed state's mask, then the commit.
  void Emit(int32_t token) {
    const std::vector<float> logits(7, 0.0f);
    grammar_.Mask(logits.data());
    grammar_.Commit(token);
  }
  // What AppendForced drafts after the committed tokens (a row costs 5 % of a forward).
  std::vector<int32_t> Drafts(std::vector<bool>& guessed) {
    DraftResult drafts;
    grammar_.AppendForced(
        drafts, 8, false, [](int) { return 0.05; }, guessed);
    return drafts.tokens;
  }

  SlotGrammar grammar_;
};

TEST_F(SlotGrammarLayout, ALayoutSeenAfterTwoKeysIsGuessedAfterAThird) {
  for (const int32_t key : {kKeyA, kKeyB}) {
    for (const int32_t t : {key, kNewline, kColon, kValue}) Emit(t);
  }
  Emit(kKeyC);
  std::vector<bool> guessed;
  EXPECT_EQ(Drafts(guessed), (std::vector<int32_t>{kNewline, kColon, kValue, kEos}));
  EXPECT_EQ(guessed, (std::vector<bool>{true, false, false, false}));
}

TEST_F(SlotGrammarLayout, NoGuessWhereTheModelChoseDifferently) {
  for (const int32_t t : {kKeyA, kNewline, kColon, kValue, kKeyB, kColon, kValue, kKeyC}) Emit(t);
  std::vector<bool> guessed;
  EXPECT_EQ(Drafts(guessed), std::vector<int32_t>{});
  EXPECT_EQ(guessed, std::vector<bool>{});
}

TEST_F(SlotGrammarLayout, ForcedTokensAreDraftedWithoutAGuess) {
  Emit(kKeyA);
  Emit(kColon);
  std::vector<bool> guessed;
  EXPECT_EQ(Drafts(guessed), std::vector<int32_t>{kValue});
  EXPECT_EQ(guessed, std::vector<bool>{false});
}

// 200 one-letter tokens (letter i % 26) after an end-of-sequence token: the allowed ids of a
// letter class are scattered over four mask words, the last of them partial.
std::shared_ptr<CompiledGrammar> LettersGrammar(const std::string& gbnf) {
  std::vector<std::string> pieces = {"<eos>"};
  std::vector<uint8_t> matchable = {0};
  for (int i = 0; i < 200; ++i) {
    pieces.push_back(std::string(1, static_cast<char>('a' + i % 26)));
    matchable.push_back(1);
  }
  auto vocab = std::make_shared<const TokenVocabulary>(pieces, matchable, std::vector<int32_t>{0});
  return std::make_shared<CompiledGrammar>(ParseGbnf(gbnf), vocab);
}

TEST(SlotGrammarMask, MasksWordByWordAsTheReferenceDoesBitByBit) {
  const float ninf = -std::numeric_limits<float>::infinity();
  // The model's logits cover more ids than the tokenizer (padding rows): those are banned too.
  constexpr int kLogits = 230;
  for (const std::string gbnf :
       {"root ::= [a-c] \"x\"", "root ::= [a-z] \"x\"", "root ::= [q] \"x\""}) {
    SCOPED_TRACE(gbnf);
    auto grammar = LettersGrammar(gbnf);
    SlotGrammar slot({.grammar = grammar}, kLogits);
    std::vector<float> logits(kLogits);
    for (int i = 0; i < kLogits; ++i) logits[i] = std::sin(0.37f * i);
    logits[3] = ninf;  // an allowed letter ('c') banned by a logit bias
    std::vector<float> masked = logits;
    ASSERT_TRUE(slot.MaskLogits(masked.data(), kLogits));
    GrammarMatcher reference(grammar);
    int allowed = 0;
    for (int i = 0; i < kLogits; ++i) {
      const bool ok = i < grammar->vocab().size() && reference.CanAcceptToken(i);
      allowed += ok;
      EXPECT_EQ(masked[i], ok ? logits[i] : ninf) << "token " << i;
    }
    EXPECT_GT(allowed, 0);
  }
  // Every allowed token already banned: nothing left to sample.
  SlotGrammar slot({.grammar = LettersGrammar("root ::= [b] \"x\"")}, kLogits);
  std::vector<float> logits(kLogits, 0.0f);
  for (int i = 2; i < kLogits; i += 26) logits[i] = ninf;
  EXPECT_FALSE(slot.MaskLogits(logits.data(), kLogits));
}

}  // namespace
}  // namespace tandem
