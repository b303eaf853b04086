// POST /v1/responses end to end without sockets: ServerApp::Handle over a scripted backend, the
// whole response and the typed event stream of reasoning, text and a function call.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/server_app_fixture.h"

namespace tandem::server {
namespace {

using testing::ServerAppTest;

constexpr const char* kThinkTextCall =
    "<|channel>thought\nhm<channel|>Hi there"
    "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>";

TEST_F(ServerAppTest, ResponsesWholeHasReasoningMessageAndFunctionCallItems) {
  Ready();
  Script(kThinkTextCall, "<|tool_response>");
  const HttpResponse r = Post("/v1/responses", R"({"model": "tiny", "input": "x",
    "tools": [{"type": "function", "name": "get_weather"}], "metadata": {"k": "v"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = BodyJson(r);
  EXPECT_EQ(j["id"].get<std::string>().rfind("resp_", 0), 0u);
  EXPECT_EQ(j["object"], "response");
  EXPECT_EQ(j["status"], "completed");
  EXPECT_EQ(j["metadata"]["k"], "v");
  ASSERT_EQ(j["output"].size(), 3u) << j["output"].dump();
  EXPECT_EQ(j["output"][0]["type"], "reasoning");
  EXPECT_EQ(j["output"][0]["content"][0]["text"], "hm");
  EXPECT_EQ(j["output"][1]["type"], "message");
  EXPECT_EQ(j["output"][1]["content"][0]["text"], "Hi there");
  const Json& call = j["output"][2];
  EXPECT_EQ(call["type"], "function_call");
  EXPECT_EQ(call["name"], "get_weather");
  EXPECT_EQ(call["call_id"].get<std::string>().rfind("call_", 0), 0u);
  EXPECT_EQ(Json::parse(call["arguments"].get<std::string>())["city"], "Paris");
  EXPECT_GT(j["usage"]["input_tokens"].get<int>(), 0);
  EXPECT_TRUE(j["timings"].contains("speculative"));
}

TEST_F(ServerAppTest, ResponsesStreamFollowsTheTypedEventSequence) {
  Ready();
  Script(kThinkTextCall, "<|tool_response>");
  HttpResponse r = Post("/v1/responses", R"({"stream": true, "input": "x",
    "tools": [{"type": "function", "name": "get_weather"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string body = Drain(r);
  const std::vector<Json> events = DataLines(body);
  std::vector<std::string> names;
  size_t pos = 0;
  while ((pos = body.find("event: ", pos)) != std::string::npos) {
    const size_t end = body.find('\n', pos);
    names.push_back(body.substr(pos + 7, end - pos - 7));
    pos = end;
  }
  ASSERT_EQ(names.size(), events.size());
  std::vector<std::string> types;
  std::string reasoning, text, arguments;
  for (size_t i = 0; i < events.size(); ++i) {
    const Json& e = events[i];
    EXPECT_EQ(e["sequence_number"], i);
    EXPECT_EQ(e["type"], names[i]);
    const std::string type = e["type"];
    if (type == "response.reasoning_text.delta") reasoning += e["delta"].get<std::string>();
    if (type == "response.output_text.delta") text += e["delta"].get<std::string>();
    if (type == "response.function_call_arguments.delta") {
      arguments += e["delta"].get<std::string>();
    }
    // Deltas of one kind collapse to one entry, so the order reads as the item sequence.
    if (types.empty() || types.back() != type) types.push_back(type);
  }
  const std::vector<std::string> expected = {
      "response.created",
      "response.in_progress",
      "response.output_item.added",  // reasoning, at 0
      "response.content_part.added",
      "response.reasoning_text.delta",
      "response.reasoning_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",  // message, at 1
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",  // function_call, at 2
      "response.function_call_arguments.delta",
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
  };
  EXPECT_EQ(types, expected);
  EXPECT_EQ(reasoning, "hm");
  EXPECT_EQ(text, "Hi there");
  EXPECT_EQ(Json::parse(arguments)["city"], "Paris");
  const Json& final = events.back()["response"];
  ASSERT_EQ(final["output"].size(), 3u);
  EXPECT_EQ(final["output"][1]["content"][0]["text"], "Hi there");
  EXPECT_EQ(final["output"][2]["arguments"], arguments);
  EXPECT_EQ(final["output"][2]["status"], "completed");
  EXPECT_EQ(events[0]["response"]["status"], "in_progress");
  EXPECT_TRUE(events[0]["response"]["usage"].is_null());
  EXPECT_GT(final["usage"]["output_tokens"].get<int>(), 0);
  for (const Json& e : events) {
    if (e.contains("output_index") && e["type"] != "response.output_item.added" &&
        e["type"] != "response.output_item.done" && e.contains("item_id")) {
      EXPECT_EQ(e["item_id"], final["output"][e["output_index"].get<size_t>()]["id"]) << e.dump();
    }
  }
}

TEST_F(ServerAppTest, ResponsesRefusalsAreOpenAiShaped400s) {
  Ready();
  HttpResponse r = Post("/v1/responses", R"({"input": "x", "previous_response_id": "resp_1"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(BodyJson(r)["error"]["message"].get<std::string>().find("previous_response_id"),
            std::string::npos);
  EXPECT_EQ(BodyJson(r)["error"]["type"], "invalid_request_error");
  r = Post("/v1/responses", R"({"input": "x", "logprobs": true})");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(BodyJson(r)["error"]["message"].get<std::string>().find("logprobs: unknown field"),
            std::string::npos);
}

}  // namespace
}  // namespace tandem::server
