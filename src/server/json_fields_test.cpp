// CheckFields: the one check of which members a request object may hold.
#include "server/json_fields.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tandem::server {
namespace {

constexpr std::string_view kRead[] = {"a", "b"};
constexpr std::string_view kMore[] = {"c"};
constexpr NoOpField kNoOps[] = {
    {"n", [](const Json& v) { return v == 1; }, "only 1 is supported"},
};

// The Error message of checking `object`, or "" when it passes.
std::string CheckError(const std::string& object, std::string_view where = "") {
  try {
    CheckFields(ParseJsonObject(object), {kRead, kMore}, {kNoOps}, where);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(CheckFields, ReadFieldsFromEveryListPass) {
  EXPECT_EQ(CheckError(R"({})"), "");
  EXPECT_EQ(CheckError(R"({"a": 1, "b": "x", "c": null})"), "");
}

TEST(CheckFields, AnUnknownFieldIsNamedWithItsPath) {
  EXPECT_EQ(CheckError(R"({"a": 1, "max_tokenz": 5})"),
            "max_tokenz: unknown field (not supported by tandem)");
  EXPECT_EQ(CheckError(R"({"foo": null})", "messages[2]"),
            "messages[2].foo: unknown field (not supported by tandem)");
  // Names are matched exactly.
  EXPECT_NE(CheckError(R"({"A": 1})"), "");
}

TEST(CheckFields, ANoOpPassesOnlyWithAValueThatChangesNothing) {
  EXPECT_EQ(CheckError(R"({"n": 1})"), "");
  EXPECT_EQ(CheckError(R"({"n": null})"), "");
  EXPECT_EQ(CheckError(R"({"n": 2})", "stream_options"), "stream_options.n: only 1 is supported");
  EXPECT_EQ(CheckError(R"({"n": "1"})"), "n: only 1 is supported");
}

TEST(RejectUnknownFields, TakesOneListOfNames) {
  const Json object = ParseJsonObject(R"({"type": "text", "text": "hi", "cache": 1})");
  EXPECT_NO_THROW(RejectUnknownFields(object, {"type", "text", "cache"}, "p"));
  try {
    RejectUnknownFields(object, {"type", "text"}, "p");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "p.cache: unknown field (not supported by tandem)");
  }
  EXPECT_THROW(RejectUnknownFields(object, {}, ""), Error);
  EXPECT_NO_THROW(RejectUnknownFields(Json::object(), {}, ""));
}

}  // namespace
}  // namespace tandem::server
