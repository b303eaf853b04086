// SSE framing and error bodies.
#include "server/sse.h"

#include <gtest/gtest.h>

#include "server/api_error.h"

namespace tandem::server {
namespace {

TEST(Sse, FramesEventsOnOneLineEach) {
  EXPECT_EQ(SseData({{"a", "x\ny"}}), "data: {\"a\":\"x\\ny\"}\n\n");
  EXPECT_EQ(SseEvent("ping", {{"type", "ping"}}), "event: ping\ndata: {\"type\":\"ping\"}\n\n");
  EXPECT_EQ(SseEvent("a\nb", Json::object()), "event: a b\ndata: {}\n\n");
  EXPECT_EQ(SseDone(), "data: [DONE]\n\n");
  EXPECT_EQ(SseComment("keep\nalive"), ": keep alive\n\n");
}

TEST(Sse, InvalidUtf8IsReplacedNotThrown) {
  const std::string data = SseData({{"t", std::string("a\xff"
                                                      "b")}});
  EXPECT_EQ(data,
            "data: {\"t\":\"a\xEF\xBF\xBD"
            "b\"}\n\n");
}

TEST(ApiError, OpenAiShape) {
  const Json e = ErrorBody(ApiFlavor::kOpenAi, 401, "bad key");
  EXPECT_EQ(e["error"]["message"], "bad key");
  EXPECT_EQ(e["error"]["type"], "authentication_error");
  EXPECT_EQ(e["error"]["code"], 401);
  EXPECT_TRUE(e["error"]["param"].is_null());
  EXPECT_EQ(ErrorBody(ApiFlavor::kOpenAi, 400, "x")["error"]["type"], "invalid_request_error");
  EXPECT_EQ(ErrorBody(ApiFlavor::kOpenAi, 404, "x")["error"]["type"], "not_found_error");
  EXPECT_EQ(ErrorBody(ApiFlavor::kOpenAi, 503, "x")["error"]["type"], "unavailable_error");
  EXPECT_EQ(ErrorBody(ApiFlavor::kOpenAi, 500, "x")["error"]["type"], "server_error");
}

TEST(ApiError, AnthropicShape) {
  const Json e = ErrorBody(ApiFlavor::kAnthropic, 413, "too big");
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["error"]["type"], "request_too_large");
  EXPECT_EQ(e["error"]["message"], "too big");
  EXPECT_EQ(ErrorBody(ApiFlavor::kAnthropic, 503, "x")["error"]["type"], "overloaded_error");
  EXPECT_EQ(ErrorBody(ApiFlavor::kAnthropic, 500, "x")["error"]["type"], "api_error");
  EXPECT_EQ(ErrorBody(ApiFlavor::kAnthropic, 401, "x")["error"]["type"], "authentication_error");
}

TEST(ApiError, StatusForErrorKinds) {
  EXPECT_EQ(HttpStatusForError(ErrorKind::kInvalidArgument), 400);
  EXPECT_EQ(HttpStatusForError(ErrorKind::kNotFound), 404);
  EXPECT_EQ(HttpStatusForError(ErrorKind::kInternal), 500);
}

}  // namespace
}  // namespace tandem::server
