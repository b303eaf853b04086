#include "tokenizer/stop_strings.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

// Feeding the text in every possible split gives the same shown text.
std::string FeedSplit(const std::vector<std::string>& stops, const std::string& text, size_t cut,
                      bool* stopped) {
  StopStringFilter f(stops);
  std::string shown = f.Feed(text.substr(0, cut));
  shown += f.Feed(text.substr(cut));
  shown += f.Flush();
  *stopped = f.stopped();
  return shown;
}

TEST(StopStrings, StopsBeforeTheStopStringAtEverySplit) {
  const std::string text = "Hello wor## done END and more";
  for (size_t cut = 0; cut <= text.size(); ++cut) {
    bool stopped = false;
    EXPECT_EQ(FeedSplit({"END", "##x"}, text, cut, &stopped), "Hello wor## done ") << cut;
    EXPECT_TRUE(stopped);
  }
}

TEST(StopStrings, HoldsBackOnlyPossiblePrefixes) {
  StopStringFilter f({"</s>"});
  EXPECT_EQ(f.Feed("abc<"), "abc");
  EXPECT_EQ(f.Feed("/x"), "</x");
  EXPECT_EQ(f.Feed("</"), "");
  EXPECT_EQ(f.Flush(), "</");
  EXPECT_FALSE(f.stopped());
}

TEST(StopStrings, EarliestMatchWinsAndNothingAfter) {
  StopStringFilter f({"bb", "a"});
  EXPECT_EQ(f.Feed("xxbbya"), "xx");
  EXPECT_EQ(f.matched(), "bb");
  EXPECT_EQ(f.Feed("more"), "");
  EXPECT_EQ(f.Flush(), "");
}

TEST(StopStrings, NoStopsPassesEverything) {
  StopStringFilter f({});
  EXPECT_EQ(f.Feed("abc"), "abc");
  EXPECT_EQ(f.Flush(), "");
}

}  // namespace
}  // namespace tandem
