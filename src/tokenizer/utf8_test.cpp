// Tests for the UTF-8 helpers: well-formedness per Unicode Table 3-7, boundaries, sanitising.
#include "tokenizer/utf8.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(Utf8Test, SequenceLengthOfWellFormedCharacters) {
  EXPECT_EQ(Utf8SequenceLength("a", 0), 1u);
  EXPECT_EQ(Utf8SequenceLength(std::string_view("\0", 1), 0), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xC3\xA9", 0), 2u);          // é
  EXPECT_EQ(Utf8SequenceLength("\xE2\x96\x81", 0), 3u);      // U+2581
  EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x98\x80", 0), 4u);  // U+1F600
  EXPECT_EQ(Utf8SequenceLength("\xF4\x8F\xBF\xBF", 0), 4u);  // U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("a\xC3\xA9", 1), 2u);
}

TEST(Utf8Test, SequenceLengthRejectsIllFormedBytes) {
  EXPECT_EQ(Utf8SequenceLength("\x80", 0), 0u);              // stray continuation
  EXPECT_EQ(Utf8SequenceLength("\xC0\xAF", 0), 0u);          // overlong 2-byte
  EXPECT_EQ(Utf8SequenceLength("\xC1\xBF", 0), 0u);          // overlong 2-byte
  EXPECT_EQ(Utf8SequenceLength("\xE0\x80\xAF", 0), 0u);      // overlong 3-byte
  EXPECT_EQ(Utf8SequenceLength("\xED\xA0\x80", 0), 0u);      // surrogate U+D800
  EXPECT_EQ(Utf8SequenceLength("\xF0\x80\x80\x80", 0), 0u);  // overlong 4-byte
  EXPECT_EQ(Utf8SequenceLength("\xF4\x90\x80\x80", 0), 0u);  // above U+10FFFF
  EXPECT_EQ(Utf8SequenceLength("\xF5\x80\x80\x80", 0), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xFF", 0), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xE2\x96", 0), 0u);   // truncated
  EXPECT_EQ(Utf8SequenceLength("\xE2\x96x", 0), 0u);  // interrupted
  EXPECT_EQ(Utf8SequenceLength("\xF0\x9F\x98", 0), 0u);
}

TEST(Utf8Test, IsValidUtf8) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xF0\x9F\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("caf\xE9"));
  EXPECT_FALSE(IsValidUtf8("\xF0\x9F\x98"));
}

TEST(Utf8Test, CompletePrefixHoldsBackOnlyCompletableTails) {
  EXPECT_EQ(Utf8CompletePrefixLength(""), 0u);
  EXPECT_EQ(Utf8CompletePrefixLength("abc"), 3u);
  EXPECT_EQ(Utf8CompletePrefixLength("ab\xF0"), 2u);
  EXPECT_EQ(Utf8CompletePrefixLength("ab\xF0\x9F"), 2u);
  EXPECT_EQ(Utf8CompletePrefixLength("ab\xF0\x9F\x98"), 2u);
  EXPECT_EQ(Utf8CompletePrefixLength("ab\xF0\x9F\x98\x80"), 6u);
  EXPECT_EQ(Utf8CompletePrefixLength("\xC3"), 0u);
  // Never completable: passed through, not held.
  EXPECT_EQ(Utf8CompletePrefixLength("ab\x80"), 3u);
  EXPECT_EQ(Utf8CompletePrefixLength("ab\xFF"), 3u);
  EXPECT_EQ(Utf8CompletePrefixLength("ab\xF0\x41"), 4u);
  EXPECT_EQ(Utf8CompletePrefixLength("\xE0\x80"), 2u);  // overlong start cannot complete
  EXPECT_EQ(Utf8CompletePrefixLength("\xED\xA0"), 2u);  // surrogate start cannot complete
  // An invalid byte followed by a completable lead: only the lead is held.
  EXPECT_EQ(Utf8CompletePrefixLength("\xF0\x9F\xE2"), 2u);
}

TEST(Utf8Test, SanitizeReplacesEachIllFormedByte) {
  EXPECT_EQ(SanitizeUtf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(SanitizeUtf8("a\xFF"
                         "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(SanitizeUtf8("\xF0\x9F\x98"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(Utf8Test, AppendUtf8EncodesEveryLength) {
  std::string s;
  AppendUtf8(U'A', s);
  AppendUtf8(0xE9, s);
  AppendUtf8(0x2581, s);
  AppendUtf8(0x1F600, s);
  EXPECT_EQ(s, "A\xC3\xA9\xE2\x96\x81\xF0\x9F\x98\x80");
  EXPECT_TRUE(IsValidUtf8(s));
}

}  // namespace
}  // namespace tandem
