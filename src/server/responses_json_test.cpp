// OpenAI Responses request parsing and response shapes.
#include "server/responses_json.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "server/constraint_fields.h"

namespace tandem::server {
namespace {

GenerationRequest Parse(const std::string& body) {
  GenerationRequest r;
  ParseResponsesBody(ParseJsonObject(body), r);
  return r;
}

// The Error message of parsing `body`, or "" if it parsed.
std::string ParseError(const std::string& body) {
  try {
    Parse(body);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(ResponsesJson, StringInputIsOneUserMessageAfterTheInstructions) {
  const GenerationRequest r =
      Parse(R"({"model": "m", "input": "hi", "instructions": "be brief", "max_output_tokens": 7,
                "temperature": 0, "top_p": 0.5, "stream": true})");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0].role, ChatRole::kSystem);
  EXPECT_EQ(r.messages[0].content, "be brief");
  EXPECT_EQ(r.messages[1].role, ChatRole::kUser);
  EXPECT_EQ(r.messages[1].content, "hi");
  EXPECT_EQ(r.max_tokens, 7);
  EXPECT_EQ(r.sampling.temperature, 0.0f);
  EXPECT_EQ(r.sampling.top_p, 0.5f);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.chat);
}

TEST(ResponsesJson, ItemsBecomeOneAssistantTurnAndToolMessages) {
  const GenerationRequest r = Parse(R"({"input": [
    {"role": "developer", "content": [{"type": "input_text", "text": "dev"}]},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "wea"},
                                                    {"type": "input_text", "text": "ther?"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [],
     "content": [{"type": "reasoning_text", "text": "think"}]},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "let me look", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
     "arguments": "{\"city\": \"Paris\"}", "status": "completed"},
    {"type": "function_call", "call_id": "call_2", "name": "get_time", "arguments": ""},
    {"type": "function_call_output", "call_id": "call_1", "output": "sunny"},
    {"type": "function_call_output", "call_id": "call_2", "output": "noon"},
    {"role": "assistant", "content": "sunny at noon"}
  ]})");
  ASSERT_EQ(r.messages.size(), 6u);
  EXPECT_EQ(r.messages[0].role, ChatRole::kSystem);
  EXPECT_EQ(r.messages[1].content, "weather?");
  const ChatMessage& turn = r.messages[2];
  EXPECT_EQ(turn.role, ChatRole::kAssistant);
  EXPECT_EQ(turn.reasoning, "think");
  EXPECT_EQ(turn.content, "let me look");
  ASSERT_EQ(turn.tool_calls.size(), 2u);
  EXPECT_EQ(turn.tool_calls[0].id, "call_1");
  EXPECT_EQ(turn.tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(turn.tool_calls[1].arguments, "{}");
  EXPECT_EQ(r.messages[3].role, ChatRole::kTool);
  EXPECT_EQ(r.messages[3].tool_call_id, "call_1");
  EXPECT_EQ(r.messages[3].content, "sunny");
  EXPECT_EQ(r.messages[4].tool_call_id, "call_2");
  EXPECT_EQ(r.messages[5].role, ChatRole::kAssistant);
  EXPECT_EQ(r.messages[5].content, "sunny at noon");
}

TEST(ResponsesJson, InputImageIsAMediaPart) {
  const GenerationRequest r = Parse(R"({"input": [{"role": "user", "content": [
    {"type": "input_text", "text": "what?"},
    {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}
  ]}]})");
  ASSERT_EQ(r.messages.size(), 1u);
  ASSERT_EQ(r.messages[0].parts.size(), 2u);
  EXPECT_EQ(r.messages[0].parts[1].type, ContentType::kImage);
  ASSERT_EQ(r.images.size(), 1u);
  EXPECT_EQ(r.images[0].mime, "image/png");
  EXPECT_NE(ParseError(R"({"input": [{"role": "user", "content": [
    {"type": "input_image", "image_url": "https://x/y.png"}]}]})")
                .find("input[0].content[0].image_url: remote image URLs are not fetched"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": [{"role": "user", "content": [
    {"type": "input_image", "file_id": "file_1"}]}]})")
                .find("input[0].content[0].file_id: tandem stores no files"),
            std::string::npos);
}

TEST(ResponsesJson, ToolsAreFlatAndToolChoiceForcesOrNamesOne) {
  const std::string tools = R"("tools": [
    {"type": "function", "name": "a", "description": "A", "parameters": {"type": "object"},
     "strict": true},
    {"type": "function", "name": "b"}])";
  GenerationRequest r = Parse(R"({"input": "x", )" + tools + R"(, "tool_choice": "required",
                                 "parallel_tool_calls": false})");
  ASSERT_EQ(r.tools.size(), 2u);
  EXPECT_EQ(r.tools[0].description, "A");
  EXPECT_EQ(r.tools[0].parameters, Json({{"type", "object"}}));
  EXPECT_TRUE(r.tool_call_required);
  EXPECT_EQ(r.max_tool_calls, 1);
  r = Parse(R"({"input": "x", )" + tools +
            R"(, "tool_choice": {"type": "function", "name": "b"}})");
  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0].name, "b");
  EXPECT_TRUE(r.tool_call_required);
  r = Parse(R"({"input": "x", )" + tools + R"(, "tool_choice": "none"})");
  EXPECT_TRUE(r.tools.empty());
  EXPECT_NE(ParseError(R"({"input": "x", )" + tools +
                       R"(, "tool_choice": {"type": "function", "name": "c"}})")
                .find("tool_choice names function 'c'"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "tools": [{"type": "web_search"}]})")
                .find("tools[0].type: only \"function\" tools are supported"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "tools": [{"type": "function", "function": {}}]})")
                .find("tools[0].function: unknown field"),
            std::string::npos);
}

TEST(ResponsesJson, TextFormatIsTheChatRoutesConstraint) {
  GenerationRequest r = Parse(R"({"input": "x", "text": {"format": {"type": "json_schema",
    "name": "p", "strict": true, "schema": {"type": "object", "properties": {"a": {"type": "integer"}},
    "required": ["a"]}}}})");
  EXPECT_EQ(r.constraint_field, "text.format");
  GenerationRequest chat;
  ParseResponseFormat(ParseJsonObject(R"({"response_format": {"type": "json_schema",
    "json_schema": {"name": "p", "schema": {"type": "object", "properties": {"a": {"type": "integer"}},
    "required": ["a"]}}}})"),
                      chat);
  EXPECT_EQ(ConstraintKey(r.constraint), ConstraintKey(chat.constraint));
  r = Parse(R"({"input": "x", "text": {"format": {"type": "json_object"}}})");
  EXPECT_EQ(r.constraint.kind, ConstraintSource::Kind::kJsonObject);
  r = Parse(R"({"input": "x", "text": {"format": {"type": "text"}}})");
  EXPECT_TRUE(r.constraint.empty());
  // A schema that does not compile fails when the request starts, naming where it was.
  r = Parse(R"({"input": "x", "text": {"format": {"type": "json_schema",
    "schema": {"type": "object", "properties": {"a": {"type": "nonsense"}}}}}})");
  EXPECT_EQ(r.constraint_schema_field, "text.format.schema");
  try {
    ConstraintGbnf(r.constraint);
    ADD_FAILURE() << "compiled";
  } catch (const JsonSchemaError& e) {
    EXPECT_EQ(e.path(), "/properties/a/type");
  }
  EXPECT_NE(ParseError(R"({"input": "x", "text": {"verbosity": "low"}})")
                .find("text.verbosity: unknown field"),
            std::string::npos);
}

TEST(ResponsesJson, ReasoningEffortTurnsThinkingOnOrOff) {
  EXPECT_TRUE(Parse(R"({"input": "x", "reasoning": {"effort": "high"}})").thinking);
  GenerationRequest r;
  r.thinking = true;
  ParseResponsesBody(ParseJsonObject(R"({"input": "x", "reasoning": {"effort": "minimal"}})"), r);
  EXPECT_FALSE(r.thinking);
  EXPECT_NE(ParseError(R"({"input": "x", "reasoning": {"effort": "max"}})")
                .find("reasoning.effort: expected none, minimal"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "reasoning": {"summary": "auto"}})")
                .find("reasoning.summary: tandem writes no reasoning summaries"),
            std::string::npos);
}

TEST(ResponsesJson, RefusesWhatItDoesNotImplementNamingTheField) {
  EXPECT_NE(ParseError(R"({"input": "x", "frobnicate": 1})").find("frobnicate: unknown field"),
            std::string::npos);
  EXPECT_EQ(ParseError(R"({"input": "x", "store": false, "metadata": {"k": "v"}, "user": "u"})"),
            "");
  EXPECT_EQ(ParseError(R"({"input": "x", "store": true, "previous_response_id": "resp_1"})"), "");
  // What the SDKs send about the service, accepted where it changes nothing, as on the chat route.
  EXPECT_EQ(ParseError(R"({"input": "x", "service_tier": "auto", "prompt_cache_key": "k",
                           "safety_identifier": "u1"})"),
            "");
  EXPECT_NE(ParseError(R"({"input": "x", "service_tier": "flex"})").find("service_tier: tandem"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "prompt_cache_key": 3})").find("prompt_cache_key: "),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "store": "yes"})").find("store: expected"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "previous_response_id": 7})")
                .find("previous_response_id: expected"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "metadata": {"k": 1}})").find("metadata.k"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "truncation": "auto"})").find("truncation"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"model": "m"})").find("input is required"), std::string::npos);
  EXPECT_NE(ParseError(R"({"input": []})").find("input must not be empty"), std::string::npos);
  EXPECT_NE(ParseError(R"({"input": 3})").find("input: expected"), std::string::npos);
  EXPECT_NE(ParseError(R"({"input": [{"role": "tool", "content": "x"}]})").find("input[0].role"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": [{"type": "web_search_call"}]})")
                .find("input[0].type: item type 'web_search_call' is not supported"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": [{"role": "user", "content": "x", "extra": 1}]})")
                .find("input[0].extra: unknown field"),
            std::string::npos);
  EXPECT_NE(
      ParseError(R"({"input": [{"role": "user", "content": [{"type": "text", "text": "x"}]}]})")
          .find("input[0].content[0]: content type 'text' is not supported"),
      std::string::npos);
  EXPECT_NE(ParseError(R"({"input": [{"type": "function_call", "call_id": "c", "name": "f",
                                      "arguments": "[1]"}]})")
                .find("input[0].arguments: expected a JSON object"),
            std::string::npos);
  EXPECT_NE(ParseError(R"({"input": "x", "max_output_tokens": 0})").find("max_output_tokens"),
            std::string::npos);
}

// The store's switch: `store` as given, stored by default while the store is on; with the store
// off, asking for it (store: true or a previous_response_id) is a 400 saying so.
TEST(ResponsesJson, StoreRequestedFollowsTheBodyAndTheServer) {
  auto requested = [](const char* body, bool on) {
    return ResponsesStoreRequested(ParseJsonObject(body), on);
  };
  EXPECT_TRUE(requested(R"({"input": "x"})", true));
  EXPECT_TRUE(requested(R"({"input": "x", "store": true})", true));
  EXPECT_FALSE(requested(R"({"input": "x", "store": false})", true));
  EXPECT_FALSE(requested(R"({"input": "x"})", false));
  EXPECT_FALSE(requested(R"({"input": "x", "store": false})", false));
  auto refusal = [&](const char* body) {
    try {
      requested(body, false);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string store = refusal(R"({"input": "x", "store": true})");
  EXPECT_EQ(store.rfind("store: this server keeps no responses", 0), 0u) << store;
  EXPECT_NE(store.find("--responses-store-count"), std::string::npos);
  const std::string previous =
      refusal(R"({"input": "x", "store": false, "previous_response_id": "resp_1"})");
  EXPECT_EQ(previous.rfind("previous_response_id: this server keeps no responses", 0), 0u)
      << previous;
}

// A previous response's conversation comes after this request's instructions and before its
// input; the string input becomes a user message item.
TEST(ResponsesJson, HistoryComesBetweenInstructionsAndInput) {
  const Json history = Json::parse(R"([
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [],
     "content": [{"type": "reasoning_text", "text": "think"}], "status": "completed"},
    {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
     "content": [{"type": "output_text", "text": "hello", "annotations": []}]}])");
  const Json body = ParseJsonObject(R"({"input": "again", "instructions": "be brief"})");
  GenerationRequest r;
  ParseResponsesBody(body, r, history);
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.messages[0].role, ChatRole::kSystem);
  EXPECT_EQ(r.messages[0].content, "be brief");
  EXPECT_EQ(r.messages[1].role, ChatRole::kUser);
  EXPECT_EQ(r.messages[1].content, "hi");
  EXPECT_EQ(r.messages[2].role, ChatRole::kAssistant);
  EXPECT_EQ(r.messages[2].reasoning, "think");
  EXPECT_EQ(r.messages[2].content, "hello");
  EXPECT_EQ(r.messages[3].role, ChatRole::kUser);
  EXPECT_EQ(r.messages[3].content, "again");
  EXPECT_EQ(InputItems(body), Json::parse(R"([{"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "again"}]}])"));
  const Json items = ParseJsonObject(R"({"input": [{"role": "user", "content": "a"}]})");
  EXPECT_EQ(InputItems(items), items["input"]);
  // The items a string input becomes parse back to the same message.
  GenerationRequest again;
  ParseResponsesBody(ParseJsonObject(R"({"input": "x"})"), again, InputItems(body));
  ASSERT_EQ(again.messages.size(), 2u);
  EXPECT_EQ(again.messages[0].content, "again");
}

TEST(ResponsesJson, ResponseObjectHasOpenAisShape) {
  const Json body = ParseJsonObject(
      R"({"input": "x", "instructions": "i", "metadata": {"k": "v"}, "max_output_tokens": 9})");
  GenerationRequest request;
  ParseResponsesBody(body, request);
  ChatOutput output;
  output.reasoning = "hmm";
  output.content = "hello";
  output.tool_calls.push_back({"call_1", "f", R"({"a":1})"});
  GenerationTotals totals;
  totals.prompt_tokens = 5;
  totals.cached_prompt_tokens = 2;
  totals.completion_tokens = 3;
  Json r = ResponseObject({"resp_1", 42, "m"}, ResponsesEcho(body, request),
                          OutputItems(output, false), &totals);
  EXPECT_EQ(r["object"], "response");
  EXPECT_EQ(r["status"], "completed");
  EXPECT_EQ(r["instructions"], "i");
  EXPECT_EQ(r["metadata"], Json({{"k", "v"}}));
  EXPECT_EQ(r["max_output_tokens"], 9);
  EXPECT_EQ(r["store"], false);
  EXPECT_TRUE(r["previous_response_id"].is_null());
  EXPECT_EQ(r["tool_choice"], "auto");
  EXPECT_EQ(r["text"]["format"]["type"], "text");
  ASSERT_EQ(r["output"].size(), 3u);
  EXPECT_EQ(r["output"][0]["type"], "reasoning");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "hmm");
  EXPECT_EQ(r["output"][1]["type"], "message");
  EXPECT_EQ(r["output"][1]["content"][0], Json::parse(R"({"type": "output_text", "text": "hello",
                                                          "annotations": []})"));
  EXPECT_EQ(r["output"][2]["type"], "function_call");
  EXPECT_EQ(r["output"][2]["call_id"], "call_1");
  EXPECT_EQ(r["output"][2]["arguments"], R"({"a":1})");
  EXPECT_EQ(r["usage"]["input_tokens"], 5);
  EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 2);
  EXPECT_EQ(r["usage"]["output_tokens"], 3);
  EXPECT_EQ(r["usage"]["total_tokens"], 8);
  EXPECT_TRUE(r["incomplete_details"].is_null());
  totals.finish = FinishReason::kLength;
  output.tool_calls.clear();
  r = ResponseObject({"resp_1", 42, "m"}, ResponsesEcho(body, request), OutputItems(output, true),
                     &totals);
  EXPECT_EQ(r["status"], "incomplete");
  EXPECT_EQ(r["incomplete_details"]["reason"], "max_output_tokens");
  ASSERT_EQ(r["output"].size(), 2u);
  EXPECT_EQ(r["output"][0]["status"], "completed");  // the reasoning ended before the message
  EXPECT_EQ(r["output"][1]["status"], "incomplete");
  output.tool_calls.push_back({"call_1", "f", "{}"});
  // Only tool calls: no empty message item.
  output.content.clear();
  output.reasoning.clear();
  EXPECT_EQ(OutputItems(output, false).size(), 1u);
  EXPECT_EQ(OutputItems(ChatOutput{}, false)[0]["type"], "message");
  const Json chained = ParseJsonObject(R"({"input": "x", "previous_response_id": "resp_0"})");
  const Json echo = ResponsesEcho(chained, request, true);
  EXPECT_EQ(echo["previous_response_id"], "resp_0");
  EXPECT_EQ(echo["store"], true);
}

}  // namespace
}  // namespace tandem::server
