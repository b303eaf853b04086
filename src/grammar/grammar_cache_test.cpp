#include "grammar/grammar_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"
#include "grammar/tool_call_grammar.h"
#include "tokenizer/tokenizer_json.h"

namespace tandem {
namespace {

TEST(GrammarCache, KeepsTheMostRecentByTextAndVocabulary) {
  const Tokenizer tokenizer(LoadVocabFromTokenizerJson(std::string(TANDEM_SOURCE_DIR) +
                                                       "/models/hf/target/tokenizer.json"));
  GrammarCache cache(tokenizer, 2);
  const auto a = cache.Get(R"(root ::= "a")");
  EXPECT_EQ(cache.Get(R"(root ::= "a")"), a);
  // The same text for tool calls is another grammar: its vocabulary matches the markup tokens.
  const auto a_tools = cache.Get(R"(root ::= "a")", true);
  EXPECT_NE(a_tools, a);
  const int32_t quote = tokenizer.FindToken(chat_marker::kQuote);
  EXPECT_TRUE(a_tools->vocab().matchable(quote));
  EXPECT_FALSE(a->vocab().matchable(quote));
  EXPECT_EQ(cache.Get(R"(root ::= "a")"), a);  // still one of the 2 kept (now most recent)
  cache.Get(R"(root ::= "b")");                // evicts a_tools, the least recently used
  EXPECT_EQ(cache.Get(R"(root ::= "a")"), a);
  EXPECT_NE(cache.Get(R"(root ::= "a")", true), a_tools);
  // The encoder drafts forced strings as the tokenizer writes them.
  EXPECT_EQ(a->encoder()("<|\"|>"), std::vector<int32_t>{quote});
  EXPECT_THROW(cache.Get("root ::= missing"), Error);
}

}  // namespace
}  // namespace tandem
