// Tests for Tokenizer on small hand-made vocabularies: BPE order, specials, bytes, decoding,
// errors.
#include "tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "tokenizer/test_vocab.h"

namespace tandem {
namespace {

using testing::IdOf;
using testing::kBos;
using testing::kEos;
using testing::kFirstByte;
using testing::kUnk;
using testing::MakeVocab;

constexpr TokenType kN = TokenType::kNormal;
const std::string kSp = "\xE2\x96\x81";  // U+2581

std::vector<int32_t> Raw(const Tokenizer& t, std::string_view text, bool parse_special = true) {
  return t.Encode(text, {.add_special = false, .parse_special = parse_special});
}

int32_t Byte(uint8_t b) {
  return kFirstByte + b;
}

TEST(TokenizerTest, MergesApplyByRankNotPosition) {
  // "b c" ranks before "a b", so "abc" becomes a|bc although "ab" comes first in the text.
  Vocab v = MakeVocab({{"a", kN}, {"b", kN}, {"c", kN}, {"ab", kN}, {"bc", kN}}, {"b c", "a b"});
  const Tokenizer t(v);
  EXPECT_EQ(Raw(t, "abc"), (std::vector<int32_t>{IdOf(v, "a"), IdOf(v, "bc")}));
  Vocab w = MakeVocab({{"a", kN}, {"b", kN}, {"c", kN}, {"ab", kN}, {"bc", kN}}, {"a b", "b c"});
  const Tokenizer u(w);
  EXPECT_EQ(Raw(u, "abc"), (std::vector<int32_t>{IdOf(w, "ab"), IdOf(w, "c")}));
}

TEST(TokenizerTest, EqualRanksMergeLeftmostFirst) {
  Vocab v = MakeVocab({{"a", kN}, {"aa", kN}}, {"a a"});
  const Tokenizer t(v);
  const int32_t a = IdOf(v, "a");
  const int32_t aa = IdOf(v, "aa");
  EXPECT_EQ(Raw(t, "aaa"), (std::vector<int32_t>{aa, a}));
  EXPECT_EQ(Raw(t, "aaaaa"), (std::vector<int32_t>{aa, aa, a}));
}

TEST(TokenizerTest, MergedSymbolsMergeAgain) {
  Vocab v = MakeVocab({{"a", kN}, {"b", kN}, {"ab", kN}, {"abab", kN}, {"ababab", kN}},
                      {"a b", "ab ab", "abab ab"});
  const Tokenizer t(v);
  EXPECT_EQ(Raw(t, "ababab"), (std::vector<int32_t>{IdOf(v, "ababab")}));
  EXPECT_EQ(Raw(t, "abababab"), (std::vector<int32_t>{IdOf(v, "abab"), IdOf(v, "abab")}));
}

TEST(TokenizerTest, SpacesAreEscapedAndNoPrefixIsAdded) {
  Vocab v = MakeVocab({{"a", kN}, {kSp, kN}, {kSp + "a", kN}, {kSp + kSp, kN}},
                      {kSp + " a", kSp + " " + kSp});
  const Tokenizer t(v);
  EXPECT_EQ(Raw(t, "a"), (std::vector<int32_t>{IdOf(v, "a")}));
  EXPECT_EQ(Raw(t, " a"), (std::vector<int32_t>{IdOf(v, kSp + "a")}));
  // "▁ a" outranks "▁ ▁": a|▁|▁a, not a|▁▁|a.
  EXPECT_EQ(Raw(t, "a  a"), (std::vector<int32_t>{IdOf(v, "a"), IdOf(v, kSp), IdOf(v, kSp + "a")}));
  EXPECT_EQ(Raw(t, "  "), (std::vector<int32_t>{IdOf(v, kSp + kSp)}));
  EXPECT_EQ(t.Decode(Raw(t, " a  a ")), " a  a ");
}

TEST(TokenizerTest, BosAndEosFollowTheVocabularyFlags) {
  Vocab v = MakeVocab({{"a", kN}}, {});
  v.add_eos = true;
  const Tokenizer t(v);
  EXPECT_EQ(t.Encode("a"), (std::vector<int32_t>{kBos, IdOf(v, "a"), kEos}));
  EXPECT_EQ(t.Encode("", {.add_special = true}), (std::vector<int32_t>{kBos, kEos}));
  EXPECT_EQ(t.Encode("a", {.add_special = false}), (std::vector<int32_t>{IdOf(v, "a")}));
  v.add_bos = false;
  v.add_eos = false;
  const Tokenizer u(v);
  EXPECT_EQ(u.Encode("a"), (std::vector<int32_t>{IdOf(v, "a")}));
}

TEST(TokenizerTest, MissingCharactersFallBackToUppercaseByteTokens) {
  Vocab v = MakeVocab({{"a", kN}}, {});
  const Tokenizer t(v);
  // é = C3 A9, 😀 = F0 9F 98 80.
  EXPECT_EQ(Raw(t, "a\xC3\xA9"), (std::vector<int32_t>{IdOf(v, "a"), Byte(0xC3), Byte(0xA9)}));
  EXPECT_EQ(Raw(t, "\xF0\x9F\x98\x80"),
            (std::vector<int32_t>{Byte(0xF0), Byte(0x9F), Byte(0x98), Byte(0x80)}));
  EXPECT_EQ(Raw(t, std::string_view("\0", 1)), (std::vector<int32_t>{Byte(0x00)}));
}

TEST(TokenizerTest, InvalidUtf8BytesAreSymbolsThatNeverMerge) {
  Vocab v = MakeVocab({{"a", kN}, {"b", kN}, {"ab", kN}, {"\xC3\xA9", kN}}, {"a b"});
  const Tokenizer t(v);
  EXPECT_EQ(Raw(t,
                "a\xFF"
                "b"),
            (std::vector<int32_t>{IdOf(v, "a"), Byte(0xFF), IdOf(v, "b")}));
  // A truncated sequence is three stray bytes, then the valid é.
  EXPECT_EQ(Raw(t, "\xF0\x9F\x98\xC3\xA9"),
            (std::vector<int32_t>{Byte(0xF0), Byte(0x9F), Byte(0x98), IdOf(v, "\xC3\xA9")}));
  EXPECT_EQ(t.Decode(Raw(t, "x\xC0\xAFy\xED\xA0\x80")), "x\xC0\xAFy\xED\xA0\x80");
}

TEST(TokenizerTest, UnknownTokenWhenByteTokensAreMissing) {
  Vocab v = MakeVocab({{"a", kN}}, {}, /*with_bytes=*/false);
  const Tokenizer t(v);
  EXPECT_EQ(Raw(t,
                "a\xC3\xA9"
                "a"),
            (std::vector<int32_t>{IdOf(v, "a"), kUnk, IdOf(v, "a")}));
}

TEST(TokenizerTest, ControlTokensMatchOnlyWhenParsingSpecials) {
  Vocab v = MakeVocab({{"<", kN}, {">", kN}, {"b", kN}, {"o", kN}, {"s", kN}}, {});
  const Tokenizer t(v);
  EXPECT_EQ(Raw(t, "<bos>"), (std::vector<int32_t>{kBos}));
  const std::vector<int32_t> plain = Raw(t, "<bos>", /*parse_special=*/false);
  EXPECT_EQ(plain.size(), 5u);
  EXPECT_EQ(t.Decode(plain), "<bos>");
  EXPECT_EQ(Raw(t, "<unk>").size(), 1u);  // unknown tokens behave like control tokens
  EXPECT_EQ(Raw(t, "<unk>", false).size(), 5u);
}

TEST(TokenizerTest, UserDefinedTokensAlwaysMatchBeforeBpe) {
  Vocab v = MakeVocab({{"x", kN}, {"<mask>", TokenType::kUserDefined}, {"x<", kN}}, {"x <"});
  const Tokenizer t(v);
  const std::vector<int32_t> want{IdOf(v, "x"), IdOf(v, "<mask>"), IdOf(v, "x")};
  EXPECT_EQ(Raw(t, "x<mask>x", /*parse_special=*/false), want);
  EXPECT_EQ(Raw(t, "x<mask>x", /*parse_special=*/true), want);
}

TEST(TokenizerTest, SpecialTokensMatchLeftmostLongest) {
  constexpr TokenType kUd = TokenType::kUserDefined;
  Vocab v = MakeVocab({{"ab", kUd}, {"bcd", kUd}, {"abc", kUd}, {"d", kN}, {"c", kN}}, {});
  const Tokenizer t(v);
  // Longest at the leftmost position: "abc" (not "ab"), then "d".
  EXPECT_EQ(Raw(t, "abcd"), (std::vector<int32_t>{IdOf(v, "abc"), IdOf(v, "d")}));
  // Leftmost wins over longer later matches: "ab" then "c", never "bcd".
  Vocab w = MakeVocab({{"ab", kUd}, {"bcd", kUd}, {"c", kN}, {"d", kN}}, {});
  const Tokenizer u(w);
  EXPECT_EQ(Raw(u, "abcd"), (std::vector<int32_t>{IdOf(w, "ab"), IdOf(w, "c"), IdOf(w, "d")}));
}

TEST(TokenizerTest, SpecialTokenTextsMatchRawTextBeforeSpaceEscaping) {
  // A user-defined "▁▁" matches only literal U+2581 U+2581 in the input, not two spaces.
  Vocab v = MakeVocab({{kSp + kSp, TokenType::kUserDefined}, {kSp, kN}}, {});
  const Tokenizer t(v);
  const int32_t sp = IdOf(v, kSp);
  EXPECT_EQ(Raw(t, "  "), (std::vector<int32_t>{sp, sp}));
  EXPECT_EQ(Raw(t, kSp + kSp), (std::vector<int32_t>{IdOf(v, kSp + kSp)}));
}

TEST(TokenizerTest, NewlineRunsAreSplitAndEmittedWholeWhenTokens) {
  Vocab v = MakeVocab({{"\n", kN}, {"\n\n", kN}, {"a", kN}, {"a\n", kN}}, {"a \n"});
  const Tokenizer t(v);
  const int32_t nl = IdOf(v, "\n");
  const int32_t nl2 = IdOf(v, "\n\n");
  const int32_t a = IdOf(v, "a");
  // No merge "\n \n", yet a run that is a token is emitted whole.
  EXPECT_EQ(Raw(t, "a\n\na"), (std::vector<int32_t>{a, nl2, a}));
  // "a\n" is a token with a merge, but the pre-split keeps newlines apart from other text.
  EXPECT_EQ(Raw(t, "a\na"), (std::vector<int32_t>{a, nl, a}));
  // A run that is not a token goes through BPE (no merges: one token per newline).
  EXPECT_EQ(Raw(t, "\n\n\n"), (std::vector<int32_t>{nl, nl, nl}));
}

TEST(TokenizerTest, DecodeRendersEachTokenTypeAsLlamaCppDoes) {
  Vocab v = MakeVocab({{kSp + "hi", kN},
                       {"<ud" + kSp + ">", TokenType::kUserDefined},
                       {"[PAD9]", TokenType::kUnused},
                       {"<0x4Z>", TokenType::kByte}},
                      {});
  const Tokenizer t(v);
  EXPECT_EQ(t.TokenToPiece(IdOf(v, kSp + "hi")), " hi");
  EXPECT_EQ(t.TokenToPiece(IdOf(v, "<ud" + kSp + ">")), "<ud >");
  EXPECT_EQ(t.TokenToPiece(Byte(0x0A)), "\n");
  EXPECT_EQ(t.TokenToPiece(Byte(0xFF)), "\xFF");
  EXPECT_EQ(t.TokenToPiece(kBos), "");
  EXPECT_EQ(t.TokenToPiece(kBos, /*render_special=*/true), "<bos>");
  EXPECT_EQ(t.TokenToPiece(kUnk), "");
  EXPECT_EQ(t.TokenToPiece(kUnk, true), "<unk>");
  EXPECT_EQ(t.TokenToPiece(IdOf(v, "[PAD9]")), "");
  EXPECT_EQ(t.TokenToPiece(IdOf(v, "<0x4Z>")), "<0x4Z>");  // malformed byte token: verbatim
  const std::vector<int32_t> ids{kBos, IdOf(v, kSp + "hi"), Byte(0x21), kEos};
  EXPECT_EQ(t.Decode(ids), " hi!");
  EXPECT_EQ(t.Decode(ids, true), "<bos> hi!<eos>");
}

TEST(TokenizerTest, OutOfRangeIdsAreRejected) {
  const Tokenizer t(MakeVocab({}, {}));
  try {
    t.TokenToPiece(t.n_tokens());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(std::to_string(t.n_tokens())), std::string::npos);
  }
  EXPECT_THROW(t.TokenToPiece(-1), Error);
  const std::vector<int32_t> ids{kBos, 1 << 30};
  EXPECT_THROW(t.Decode(ids), Error);
}

TEST(TokenizerTest, EndOfGenerationByIdAndByText) {
  Vocab v = MakeVocab({{"<turn|>", TokenType::kControl},
                       {"<|tool_response>", TokenType::kUserDefined},
                       {"<end_of_turn>", TokenType::kControl},
                       {"<eot>", TokenType::kControl}},
                      {});
  v.eot_id = IdOf(v, "<eot>");
  const Tokenizer t(v);
  EXPECT_TRUE(t.IsEog(kEos));
  EXPECT_TRUE(t.IsEog(IdOf(v, "<turn|>")));
  EXPECT_TRUE(t.IsEog(IdOf(v, "<|tool_response>")));
  EXPECT_TRUE(t.IsEog(IdOf(v, "<end_of_turn>")));
  EXPECT_TRUE(t.IsEog(IdOf(v, "<eot>")));
  EXPECT_FALSE(t.IsEog(kBos));
  EXPECT_FALSE(t.IsEog(-1));
  EXPECT_EQ(t.eog_ids().size(), 5u);
}

TEST(TokenizerTest, InvalidVocabulariesThrowCorrupt) {
  const auto expect_corrupt = [](Vocab v, const std::string& needle) {
    try {
      Tokenizer t(std::move(v));
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kCorrupt) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("test-vocab"), std::string::npos) << e.what();
    }
  };
  Vocab dup = MakeVocab({{"a", kN}, {"a", kN}}, {});
  expect_corrupt(dup, "same text 'a'");
  Vocab types = MakeVocab({{"a", kN}}, {});
  types.types.pop_back();
  expect_corrupt(types, "token types");
  Vocab bad_type = MakeVocab({{"a", kN}}, {});
  bad_type.types.back() = static_cast<TokenType>(9);
  expect_corrupt(bad_type, "unknown type 9");
  Vocab bos = MakeVocab({}, {});
  bos.bos_id = 100000;
  expect_corrupt(bos, "bos token id 100000");
  Vocab scores = MakeVocab({}, {});
  scores.scores = {1.0f};
  expect_corrupt(scores, "scores");
  Vocab empty;
  empty.source = "test-vocab";
  expect_corrupt(empty, "no tokens");
}

TEST(TokenizerTest, MalformedMergesAreIgnored) {
  Vocab v = MakeVocab({{"a", kN}, {"b", kN}, {"ab", kN}},
                      {"nospace", "a zz", "b a", " ", "a b"});  // only "a b" can apply
  const Tokenizer t(v);
  EXPECT_EQ(Raw(t, "ab"), (std::vector<int32_t>{IdOf(v, "ab")}));
  EXPECT_EQ(Raw(t, "ba"), (std::vector<int32_t>{IdOf(v, "b"), IdOf(v, "a")}));  // "ba" is no token
}

TEST(TokenizerTest, MovedTokenizerKeepsWorking) {
  Vocab v = MakeVocab({{"a", kN}, {"b", kN}, {"ab", kN}}, {"a b"});
  Tokenizer first(v);
  Tokenizer second = std::move(first);
  EXPECT_EQ(Raw(second, "ab"), (std::vector<int32_t>{IdOf(v, "ab")}));
  EXPECT_EQ(second.FindToken("ab"), IdOf(v, "ab"));
}

TEST(TokenizerTest, DecodeOfEncodeIsIdentityOnRandomBytes) {
  // Mixed vocabulary: letters, space runs, newline runs, a user-defined and a control token.
  std::vector<std::pair<std::string, TokenType>> extra;
  std::vector<std::string> merges;
  for (const char* s : {"a", "b", "c", "\n", "\t", "\xC3\xA9", "<"}) extra.push_back({s, kN});
  extra.push_back({kSp, kN});
  extra.push_back({kSp + "a", kN});
  extra.push_back({"ab", kN});
  extra.push_back({"abc", kN});
  extra.push_back({"\n\n", kN});
  extra.push_back({"<ab>", TokenType::kUserDefined});
  extra.push_back({"<c>", TokenType::kControl});
  merges = {kSp + " a", "a b", "ab c"};
  const Tokenizer t(MakeVocab(extra, merges));
  std::mt19937 rng(1234);
  const std::string alphabet[] = {
      "a",       "b", "c",        " ",    "\n",   "\t",   "<ab>",
      "<c>",     "<", "\xC3\xA9", "\xC3", "\xFF", "\x80", "\xF0\x9F\x98\x80",
      "\xF0\x9F"};
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 24);
    for (int i = 0; i < n; ++i) text += alphabet[rng() % std::size(alphabet)];
    const std::vector<int32_t> ids = Raw(t, text);
    ASSERT_EQ(t.Decode(ids, /*render_special=*/true), text) << "round " << round;
  }
}

TEST(TokenizerTest, LongWordsAndEmptyText) {
  Vocab v = MakeVocab({{"a", kN}, {"aa", kN}, {"aaaa", kN}}, {"a a", "aa aa"});
  const Tokenizer t(v);
  EXPECT_TRUE(Raw(t, "").empty());
  EXPECT_EQ(t.Encode(""), (std::vector<int32_t>{kBos}));
  const std::string word(100001, 'a');
  const std::vector<int32_t> ids = Raw(t, word);
  EXPECT_EQ(ids.size(), 25001u);  // 25000 x "aaaa" + "a"
  EXPECT_EQ(ids.back(), IdOf(v, "a"));
  EXPECT_EQ(t.Decode(ids), word);
}

}  // namespace
}  // namespace tandem
