#include "speculative/spec_options.h"

#include <gtest/gtest.h>

#include <string>

#include "base/error.h"

namespace tandem {
namespace {

// The message of the Error ValidateSpecOptions throws for `spec`, or "" when it accepts it.
std::string Rejection(const SpecOptions& spec) {
  try {
    ValidateSpecOptions(spec);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(SpecOptions, DraftLengthsAreCheckedAgainstTheOneLimit) {
  SpecOptions spec;
  EXPECT_EQ(Rejection(spec), "") << "the defaults pass";
  spec.draft_max = kMaxDraftTokens;
  EXPECT_EQ(Rejection(spec), "");
  spec.draft_max = kMaxDraftTokens + 1;
  EXPECT_NE(Rejection(spec).find("draft-max <= 64 (got 0, 65)"), std::string::npos)
      << Rejection(spec);
  spec.draft_max = 4;
  spec.draft_min = 5;
  EXPECT_NE(Rejection(spec).find("(got 5, 4)"), std::string::npos);
  spec.draft_min = -1;
  EXPECT_NE(Rejection(spec), "");
  spec.draft_min = 0;
  spec.draft_p_min = 1.5f;
  EXPECT_NE(Rejection(spec).find("draft-p-min"), std::string::npos);
}

TEST(SpecOptions, NgramLengthsAreCheckedOnlyWhereLookupDrafts) {
  SpecOptions spec;
  spec.ngram_min = 0;
  spec.type = SpecType::kNone;
  EXPECT_EQ(Rejection(spec), "");
  spec.type = SpecType::kNgram;
  EXPECT_NE(Rejection(spec).find("n-gram lengths"), std::string::npos);
  spec.ngram_min = 2;
  spec.ngram_max = kMaxNgramLength + 1;
  EXPECT_NE(Rejection(spec), "");
}

}  // namespace
}  // namespace tandem
