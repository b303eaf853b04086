// Anthropic request parsing and message / event shapes.
#include "server/anthropic_json.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace tandem::server {
namespace {

GenerationRequest Parse(const std::string& body) {
  GenerationRequest r;
  ParseMessagesBody(ParseJsonObject(body), r);
  return r;
}

std::string ParseError(const std::string& body) {
  try {
    Parse(body);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(AnthropicJson, MapsSystemToolUseAndToolResults) {
  const GenerationRequest r = Parse(R"({
    "model": "m", "max_tokens": 20,
    "system": [{"type": "text", "text": "be brief"}],
    "messages": [
      {"role": "user", "content": "weather in Paris?"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "need a tool", "signature": "s"},
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
      {"role": "user", "content": [
        {"type": "text", "text": "thanks"},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "sunny"}]}]}
    ],
    "tools": [{"name": "get_weather", "description": "W", "input_schema": {"type": "object"}}],
    "thinking": {"type": "enabled", "budget_tokens": 100},
    "stop_sequences": ["END"], "top_k": 5, "temperature": 0})");
  ASSERT_EQ(r.messages.size(), 5u);
  EXPECT_EQ(r.messages[0].role, ChatRole::kSystem);
  EXPECT_EQ(r.messages[0].content, "be brief");
  EXPECT_EQ(r.messages[2].role, ChatRole::kAssistant);
  EXPECT_EQ(r.messages[2].reasoning, "need a tool");
  EXPECT_EQ(r.messages[2].content, "Let me check.");
  ASSERT_EQ(r.messages[2].tool_calls.size(), 1u);
  EXPECT_EQ(r.messages[2].tool_calls[0].arguments, R"({"city":"Paris"})");
  // The tool result comes first (it continues the model turn), then the user's text.
  EXPECT_EQ(r.messages[3].role, ChatRole::kTool);
  EXPECT_EQ(r.messages[3].tool_call_id, "toolu_1");
  EXPECT_EQ(r.messages[3].content, "sunny");
  EXPECT_EQ(r.messages[4].role, ChatRole::kUser);
  EXPECT_EQ(r.messages[4].content, "thanks");
  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0].parameters["type"], "object");
  EXPECT_TRUE(r.thinking);
  EXPECT_EQ(r.thinking_budget, 100);
  EXPECT_EQ(r.stop, std::vector<std::string>{"END"});
  EXPECT_EQ(r.max_tokens, 20);
  EXPECT_EQ(r.sampling.top_k, 5);
}

TEST(AnthropicJson, RejectsBadInput) {
  EXPECT_NE(ParseError(R"({"messages": [{"role": "user", "content": "x"}]})").find("max_tokens"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"max_tokens": 5, "messages": []})").find("empty"), std::string::npos);
  EXPECT_NE(ParseError(R"({"max_tokens": 5, "messages": [{"role": "system", "content": "x"}]})")
                .find("messages[0].role"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"max_tokens": 5, "messages": [{"role": "user", "content": [
                {"type": "image", "source": {}}]}]})")
                .find("messages[0].content[0]"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"max_tokens": "5", "messages": [{"role": "user", "content": "x"}]})")
                .find("max_tokens: expected an integer"),
            std::string::npos);
  GenerationRequest r;
  EXPECT_NO_THROW(ParseCountTokensBody(
      ParseJsonObject(R"({"messages": [{"role": "user", "content": "x"}]})"), r));
}

TEST(AnthropicJson, MessageHasBlocksStopReasonAndUsage) {
  GenerationTotals totals;
  totals.prompt_tokens = 9;
  totals.cached_prompt_tokens = 3;
  totals.completion_tokens = 4;
  ChatOutput out;
  out.reasoning = "hmm";
  out.content = "Hello";
  out.tool_calls.push_back({"toolu_1", "f", R"({"a":1})"});
  const Json m = MessageJson("msg_1", "model.gguf", out, totals, Json::object());
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  ASSERT_EQ(m["content"].size(), 3u);
  EXPECT_EQ(m["content"][0]["type"], "thinking");
  EXPECT_EQ(m["content"][1]["text"], "Hello");
  EXPECT_EQ(m["content"][2]["type"], "tool_use");
  EXPECT_EQ(m["content"][2]["input"]["a"], 1);
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_TRUE(m["stop_sequence"].is_null());
  EXPECT_EQ(m["usage"]["input_tokens"], 6);
  EXPECT_EQ(m["usage"]["cache_read_input_tokens"], 3);
  EXPECT_EQ(m["usage"]["output_tokens"], 4);

  totals.finish = FinishReason::kStopString;
  totals.stop_string = "END";
  const Json d = MessageDeltaEvent(totals, false, Json::object());
  EXPECT_EQ(d["delta"]["stop_reason"], "stop_sequence");
  EXPECT_EQ(d["delta"]["stop_sequence"], "END");
  totals.finish = FinishReason::kLength;
  EXPECT_STREQ(AnthropicStopReason(totals, true), "max_tokens");
  EXPECT_EQ(MessageStartEvent("msg_1", "m", 9, 4)["message"]["usage"]["input_tokens"], 9);
  EXPECT_EQ(MessageStartEvent("msg_1", "m", 9, 4)["message"]["usage"]["cache_read_input_tokens"],
            4);
  // Nothing generated: still one (empty) text block.
  EXPECT_EQ(MessageJson("m", "m", ChatOutput{}, totals, {})["content"][0]["type"], "text");
}

}  // namespace
}  // namespace tandem::server
