// Tests for StreamingDecoder: text is released only at UTF-8 boundaries and adds up to Decode.
#include "tokenizer/streaming_decoder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "base/error.h"
#include "tokenizer/test_vocab.h"
#include "tokenizer/utf8.h"

namespace tandem {
namespace {

using testing::IdOf;
using testing::kBos;
using testing::kFirstByte;
using testing::MakeVocab;

int32_t Byte(uint8_t b) {
  return kFirstByte + b;
}

Tokenizer MakeTokenizer() {
  const std::string sp = "\xE2\x96\x81";
  return Tokenizer(MakeVocab(
      {{"a", TokenType::kNormal}, {sp + "b", TokenType::kNormal}, {"\xC3\xA9", TokenType::kNormal}},
      {}));
}

TEST(StreamingDecoderTest, HoldsAFourByteCharacterUntilItIsComplete) {
  const Tokenizer t = MakeTokenizer();
  StreamingDecoder d(t);
  EXPECT_EQ(d.Push(t.FindToken("a")), "a");
  EXPECT_EQ(d.Push(Byte(0xF0)), "");
  EXPECT_EQ(d.Push(Byte(0x9F)), "");
  EXPECT_EQ(d.pending_size(), 2u);
  EXPECT_EQ(d.Push(Byte(0x98)), "");
  EXPECT_EQ(d.Push(Byte(0x80)), "\xF0\x9F\x98\x80");
  EXPECT_EQ(d.pending_size(), 0u);
  EXPECT_EQ(d.Push(t.FindToken("\xE2\x96\x81"
                               "b")),
            " b");
  EXPECT_EQ(d.Flush(), "");
}

TEST(StreamingDecoderTest, ReleasesBytesThatCanNeverComplete) {
  const Tokenizer t = MakeTokenizer();
  StreamingDecoder d(t);
  EXPECT_EQ(d.Push(Byte(0xFF)), "\xFF");
  EXPECT_EQ(d.Push(Byte(0xC3)), "");
  // 'a' cannot continue C3: both go out together.
  EXPECT_EQ(d.Push(t.FindToken("a")),
            "\xC3"
            "a");
  EXPECT_EQ(d.Push(Byte(0xE2)), "");
  EXPECT_EQ(d.Flush(), "\xE2");  // the stream ended inside a character
  EXPECT_EQ(d.pending_size(), 0u);
}

TEST(StreamingDecoderTest, SpecialTokensFollowRenderSpecial) {
  const Tokenizer t = MakeTokenizer();
  StreamingDecoder plain(t);
  StreamingDecoder rendered(t, /*render_special=*/true);
  EXPECT_EQ(plain.Push(kBos), "");
  EXPECT_EQ(rendered.Push(kBos), "<bos>");
}

TEST(StreamingDecoderTest, OutOfRangeIdThrowsAndKeepsState) {
  const Tokenizer t = MakeTokenizer();
  StreamingDecoder d(t);
  EXPECT_EQ(d.Push(Byte(0xC3)), "");
  EXPECT_THROW(d.Push(t.n_tokens()), Error);
  EXPECT_EQ(d.pending_size(), 1u);
  EXPECT_EQ(d.Push(Byte(0xA9)), "\xC3\xA9");
}

TEST(StreamingDecoderTest, ChunksAddUpToDecodeAndEndOnBoundaries) {
  const Tokenizer t = MakeTokenizer();
  std::mt19937 rng(42);
  for (int round = 0; round < 500; ++round) {
    std::vector<int32_t> ids;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const int pick = static_cast<int>(rng() % 8);
      if (pick < 6) {
        // Bytes of real multi-byte characters, to split them over tokens.
        static const uint8_t kBytes[] = {0xC3, 0xA9, 0xE2, 0x82, 0xAC,
                                         0xF0, 0x9F, 0x98, 0x80, 0x41};
        ids.push_back(Byte(kBytes[rng() % std::size(kBytes)]));
      } else {
        ids.push_back(pick == 6 ? t.FindToken("a") : t.FindToken("\xC3\xA9"));
      }
    }
    StreamingDecoder d(t);
    std::string streamed;
    std::vector<size_t> cuts;  // where chunks ended
    for (const int32_t id : ids) {
      const std::string chunk = d.Push(id);
      streamed += chunk;
      if (!chunk.empty()) cuts.push_back(streamed.size());
      EXPECT_LE(d.pending_size(), 3u);
    }
    streamed += d.Flush();
    ASSERT_EQ(streamed, t.Decode(ids)) << "round " << round;
    // No chunk ends inside a well-formed character of the whole text.
    std::vector<bool> boundary(streamed.size() + 1, false);
    for (size_t pos = 0;; pos += std::max<size_t>(1, Utf8SequenceLength(streamed, pos))) {
      boundary[pos] = true;
      if (pos >= streamed.size()) break;
    }
    for (const size_t cut : cuts) EXPECT_TRUE(boundary[cut]) << "round " << round << " cut " << cut;
  }
}

}  // namespace
}  // namespace tandem
