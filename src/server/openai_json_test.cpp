// OpenAI request parsing and response shapes.
#include "server/openai_json.h"
#include "server/constraint_fields.h"
#include "tokenizer/tokenizer_json.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/grammar_cache.h"
#include "grammar/grammar_matcher.h"

namespace tandem::server {
namespace {

GenerationRequest ParseChat(const std::string& body) {
  GenerationRequest r;
  ParseChatCompletionBody(ParseJsonObject(body), r);
  return r;
}

// The Error message of parsing `body`, or "" if it parsed.
std::string ChatError(const std::string& body) {
  try {
    ParseChat(body);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

// The Error message of compiling the request's constraint when it starts, or "" if it compiled.
std::string CompileError(const GenerationRequest& r) {
  static const Tokenizer tokenizer(LoadVocabFromTokenizerJson(std::string(TANDEM_SOURCE_DIR) +
                                                              "/models/hf/target/tokenizer.json"));
  GrammarCache grammars(tokenizer);
  try {
    CompileConstraint(r, &grammars);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "";
}

TEST(OpenAiJson, ParsesMessagesOfEveryRole) {
  const GenerationRequest r = ParseChat(R"({
    "model": "m", "messages": [
      {"role": "developer", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "wea"}, {"type": "text", "text": "ther?"}]},
      {"role": "assistant", "content": null, "reasoning_content": "think",
       "tool_calls": [{"id": "call_1", "type": "function",
                       "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call_1", "content": "sunny"}
    ]})");
  ASSERT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.model, "m");
  EXPECT_EQ(r.messages[0].role, ChatRole::kSystem);
  EXPECT_EQ(r.messages[1].content, "weather?");
  EXPECT_EQ(r.messages[2].role, ChatRole::kAssistant);
  EXPECT_EQ(r.messages[2].reasoning, "think");
  ASSERT_EQ(r.messages[2].tool_calls.size(), 1u);
  EXPECT_EQ(r.messages[2].tool_calls[0].id, "call_1");
  EXPECT_EQ(r.messages[2].tool_calls[0].name, "get_weather");
  EXPECT_EQ(r.messages[2].tool_calls[0].arguments, R"({"city":"Paris"})");
  EXPECT_EQ(r.messages[3].role, ChatRole::kTool);
  EXPECT_EQ(r.messages[3].tool_call_id, "call_1");
  EXPECT_EQ(r.messages[3].content, "sunny");
  EXPECT_TRUE(r.chat);
  EXPECT_FALSE(r.stream);
}

TEST(OpenAiJson, ParsesToolsAndToolChoice) {
  const std::string tools = R"("tools": [
      {"type": "function", "function": {"name": "a", "description": "A", "parameters": {"type": "object"}}},
      {"type": "function", "function": {"name": "b"}}])";
  const std::string msgs = R"("messages": [{"role": "user", "content": "hi"}])";
  GenerationRequest r = ParseChat("{" + msgs + "," + tools + "}");
  ASSERT_EQ(r.tools.size(), 2u);
  EXPECT_EQ(r.tools[0].description, "A");
  EXPECT_EQ(r.tools[0].parameters["type"], "object");
  EXPECT_TRUE(r.tools[1].parameters.is_null());
  r = ParseChat("{" + msgs + "," + tools + R"(, "tool_choice": "none"})");
  EXPECT_TRUE(r.tools.empty());
  r = ParseChat("{" + msgs + "," + tools +
                R"(, "tool_choice": {"type": "function", "function": {"name": "b"}}})");
  ASSERT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tools[0].name, "b");
  EXPECT_NE(ChatError("{" + msgs + "," + tools +
                      R"(, "tool_choice": {"type": "function", "function": {"name": "zz"}}})")
                .find("zz"),
            std::string::npos);
}

TEST(OpenAiJson, ConstraintFields) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "hi"}])";
  GenerationRequest r = ParseChat("{" + msgs + R"(, "response_format": {"type": "json_object"}})");
  EXPECT_EQ(r.constraint_field, "response_format");
  EXPECT_EQ(r.constraint.kind, ConstraintSource::Kind::kJsonObject);
  r = ParseChat("{" + msgs + R"(, "response_format": {"type": "json_schema", "json_schema":
      {"name": "x", "strict": true, "schema": {"type": "object", "properties":
      {"k": {"const": 1}}, "required": ["k"]}}}})");
  EXPECT_EQ(r.constraint.kind, ConstraintSource::Kind::kJsonSchema);
  EXPECT_EQ(r.constraint.schema["properties"]["k"]["const"], 1);
  EXPECT_EQ(r.constraint_schema_field, "response_format.json_schema.schema");
  r = ParseChat("{" + msgs + R"(, "response_format": {"type": "text"}, "grammar": ""})");
  EXPECT_TRUE(r.constraint_field.empty());
  EXPECT_TRUE(r.constraint.empty());
  r = ParseChat("{" + msgs + R"(, "grammar": "root ::= \"a\""})");
  EXPECT_EQ(r.constraint.gbnf, "root ::= \"a\"");
  EXPECT_EQ(r.constraint_field, "grammar");
  EXPECT_NE(
      ChatError("{" + msgs + R"(, "json_schema": {"type": "object"}, "grammar": "root ::= \"a\""})")
          .find("json_schema and grammar both constrain"),
      std::string::npos);
  // A schema that does not compile fails when the request starts (CompileConstraint), naming it.
  r = ParseChat("{" + msgs + R"(, "json_schema": {"type": "object", "uniqueItems": true}})");
  EXPECT_NE(CompileError(r).find("json_schema: 'uniqueItems' at /uniqueItems: unsupported keyword"),
            std::string::npos);
  const std::string tools = R"("tools": [{"type": "function", "function": {"name": "a"}}])";
  r = ParseChat("{" + msgs + "," + tools + R"(, "tool_choice": "required"})");
  EXPECT_TRUE(r.tool_call_required);
  r = ParseChat("{" + msgs + "," + tools + R"(, "tool_choice": "auto"})");
  EXPECT_FALSE(r.tool_call_required);
  r = ParseChat("{" + msgs + "," + tools +
                R"(, "tool_choice": {"type": "function", "function": {"name": "a"}}})");
  EXPECT_TRUE(r.tool_call_required);
}

// Whether the request's GBNF accepts exactly `text` (bytes, against a one-token vocabulary).
bool GrammarAccepts(const GenerationRequest& r, const std::string& text) {
  auto vocab = std::make_shared<const TokenVocabulary>(
      std::vector<std::string>{"x"}, std::vector<uint8_t>{1}, std::vector<int32_t>{});
  GrammarMatcher m(
      std::make_shared<CompiledGrammar>(ParseGbnf(ConstraintGbnf(r.constraint)), vocab));
  return m.AcceptBytes(text) && m.IsComplete();
}

// One-line JSON (vLLM's disable_any_whitespace): the server default (json_one_line preset, as
// NewRequest does for --json-one-line) and the request's structured_outputs, which overrides it.
TEST(OpenAiJson, StructuredOutputsAndOneLineJson) {
  const std::string msgs = R"("messages": [{"role": "user", "content": "hi"}])";
  const std::string schema =
      R"({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "array",
      "items": {"type": "integer"}}}, "required": ["a", "b"], "additionalProperties": false})";
  const std::string one_line = R"({"a": 1, "b": [2, 3]})";
  const std::string spaced = "{\n  \"a\": 1,\n  \"b\": [2,3]\n}";
  const std::string format =
      R"(, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": )" +
      schema + "}}";

  GenerationRequest r = ParseChat("{" + msgs + format + "}");
  EXPECT_TRUE(GrammarAccepts(r, one_line));
  EXPECT_TRUE(GrammarAccepts(r, spaced));
  r = ParseChat("{" + msgs + format +
                R"(, "structured_outputs": {"disable_any_whitespace": true}})");
  EXPECT_TRUE(GrammarAccepts(r, one_line));
  EXPECT_FALSE(GrammarAccepts(r, spaced));
  EXPECT_FALSE(GrammarAccepts(r, R"({"a":1,"b":[2,3]})"));

  // The server's default, and a request that turns it off.
  GenerationRequest preset;
  preset.json_one_line = true;
  r = preset;
  ParseChatCompletionBody(ParseJsonObject("{" + msgs + format + "}"), r);
  EXPECT_FALSE(GrammarAccepts(r, spaced));
  r = preset;
  ParseChatCompletionBody(ParseJsonObject("{" + msgs + R"(, "json_schema": )" + schema + "}"), r);
  EXPECT_FALSE(GrammarAccepts(r, spaced)) << "llama-server's json_schema follows it too";
  r = preset;
  ParseChatCompletionBody(
      ParseJsonObject("{" + msgs + format +
                      R"(, "structured_outputs": {"disable_any_whitespace": false}})"),
      r);
  EXPECT_TRUE(GrammarAccepts(r, spaced));

  // structured_outputs.json (an object or its text) and json_object are constraints of their own.
  for (const std::string& json : {schema, nlohmann::json(schema).dump()}) {
    r = ParseChat("{" + msgs + R"(, "structured_outputs": {"json": )" + json +
                  R"(, "disable_any_whitespace": true}})");
    EXPECT_EQ(r.constraint_field, "structured_outputs.json");
    EXPECT_TRUE(GrammarAccepts(r, one_line));
    EXPECT_FALSE(GrammarAccepts(r, spaced));
  }
  r = ParseChat("{" + msgs + R"(, "structured_outputs": {"json_object": true}})");
  EXPECT_EQ(r.constraint_field, "structured_outputs.json_object");
  EXPECT_TRUE(GrammarAccepts(r, R"({"z": null})"));
  EXPECT_FALSE(GrammarAccepts(r, "[1]"));

  // What tandem does not implement is refused, naming the member; two constraints are refused.
  EXPECT_NE(ChatError("{" + msgs + R"(, "structured_outputs": {"regex": "a+"}})")
                .find("structured_outputs.regex: not supported"),
            std::string::npos);
  EXPECT_NE(ChatError("{" + msgs + R"(, "structured_outputs": {"choice": ["a", "b"]}})")
                .find("structured_outputs.choice: not supported"),
            std::string::npos);
  // Unset, vLLM's other kinds change nothing; a misspelt member is unknown even when false.
  ParseChat("{" + msgs + R"(, "structured_outputs": {"json_object": true, "regex": null}})");
  EXPECT_NE(ChatError("{" + msgs + R"(, "structured_outputs": {"json_objekt": false}})")
                .find("structured_outputs.json_objekt: unknown field"),
            std::string::npos);
  EXPECT_NE(ChatError("{" + msgs + format + R"(, "structured_outputs": {"json": {}}})")
                .find("both constrain"),
            std::string::npos);
  EXPECT_NE(ChatError("{" + msgs + R"(, "structured_outputs": {"json": "{not json"}})")
                .find("structured_outputs.json: "),
            std::string::npos);
  EXPECT_NE(ChatError("{" + msgs + R"(, "structured_outputs": {"disable_any_whitespace": 1}})")
                .find("disable_any_whitespace"),
            std::string::npos);
  EXPECT_NE(ChatError("{" + msgs + R"(, "structured_outputs": []})").find("structured_outputs"),
            std::string::npos);
}

TEST(OpenAiJson, SeedsAreSixtyFourBitsAndNegativeMeansRandom) {
  const auto seed = [](const std::string& v) {
    return ParseChat(R"({"messages": [{"role": "user", "content": "hi"}], "seed": )" + v + "}")
        .sampling.seed;
  };
  EXPECT_EQ(seed("4294967301"), 4294967301u);  // 2^32 + 5, not 5
  EXPECT_EQ(seed("18446744073709551615"), 18446744073709551615u);
  EXPECT_EQ(seed("-1"), kRandomSeed);
  EXPECT_THROW(seed("1.5"), Error);
  EXPECT_THROW(seed("18446744073709551616"), Error);  // 2^64 parses as a float
}

TEST(OpenAiJson, ParsesSamplingStopAndExtensions) {
  const GenerationRequest r = ParseChat(R"({
    "messages": [{"role": "user", "content": "hi"}],
    "temperature": 0.5, "top_p": 0.9, "top_k": -1, "min_p": 0.1, "seed": 42,
    "presence_penalty": 0.5, "frequency_penalty": -0.5, "logit_bias": {"7": 2.5, "9": -100},
    "max_completion_tokens": 12, "stop": ["x", ""], "stream": true,
    "stream_options": {"include_usage": true},
    "chat_template_kwargs": {"enable_thinking": true},
    "speculative": {"enabled": false, "draft_max": 2}})");
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 0);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.1f);
  EXPECT_EQ(r.sampling.seed, 42u);
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, -0.5f);
  ASSERT_EQ(r.sampling.logit_bias.size(), 2u);
  EXPECT_EQ(r.sampling.logit_bias[0].token, 7);
  EXPECT_FLOAT_EQ(r.sampling.logit_bias[0].bias, 2.5f);
  EXPECT_TRUE(std::isinf(r.sampling.logit_bias[1].bias));
  EXPECT_EQ(r.max_tokens, 12);
  EXPECT_EQ(r.stop, std::vector<std::string>{"x"});
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_TRUE(r.thinking);
  EXPECT_EQ(r.spec_enabled, std::optional<bool>(false));
  EXPECT_EQ(r.spec_draft_max, std::optional<int>(2));
}

TEST(OpenAiJson, RejectsBadInputNamingTheField) {
  EXPECT_NE(ChatError(R"({"messages": []})").find("messages must not be empty"), std::string::npos);
  EXPECT_NE(ChatError(R"({})").find("messages is required"), std::string::npos);
  EXPECT_NE(ChatError(R"({"messages": "hi"})").find("messages: expected an array"),
            std::string::npos);
  const std::string hi = R"("messages": [{"role": "user", "content": "hi"}])";
  EXPECT_NE(
      ChatError("{" + hi + R"(, "temperature": "hot"})").find("temperature: expected a number"),
      std::string::npos);
  EXPECT_NE(ChatError("{" + hi + R"(, "top_p": 3})").find("top_p"), std::string::npos);
  EXPECT_NE(ChatError("{" + hi + R"(, "max_tokens": 1.5})").find("max_tokens"), std::string::npos);
  EXPECT_NE(ChatError("{" + hi + R"(, "n": 2})").find("n = 1"), std::string::npos);
  EXPECT_NE(ChatError("{" + hi + R"(, "stop": 5})").find("stop"), std::string::npos);
  EXPECT_NE(ChatError("{" + hi + R"(, "logit_bias": {"x": 1}})").find("logit_bias"),
            std::string::npos);
  EXPECT_NE(
      ChatError("{" + hi + R"(, "speculative": {"draft_max": 999}})").find("speculative.draft_max"),
      std::string::npos);
  EXPECT_NE(
      ChatError(R"({"messages": [{"role": "wizard", "content": "x"}]})").find("messages[0].role"),
      std::string::npos);
  EXPECT_NE(ChatError(R"({"messages": [{"role": "user"}]})").find("messages[0].content"),
            std::string::npos);
  EXPECT_NE(ChatError(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})")
                .find("messages[0].content[0]"),
            std::string::npos);
  EXPECT_NE(ChatError(R"({"messages": [{"role": "user", "content": [{"type": "audio"}]}]})")
                .find("not supported"),
            std::string::npos);
  EXPECT_NE(ChatError(R"({"messages": [{"role": "assistant", "tool_calls": [
                {"function": {"name": "f", "arguments": "[1]"}}]}]})")
                .find("arguments"),
            std::string::npos);
  EXPECT_NE(ChatError("{" + hi + R"(, "response_format": {"type": "json_schema"}})")
                .find("response_format"),
            std::string::npos);
}

TEST(OpenAiJson, LogprobsAndReasoningEffort) {
  const std::string hi = R"({"messages": [{"role": "user", "content": "hi"}])";
  EXPECT_EQ(ParseChat(hi + "}").top_logprobs, -1);
  EXPECT_EQ(ParseChat(hi + R"(, "logprobs": true})").top_logprobs, 0);
  EXPECT_EQ(ParseChat(hi + R"(, "logprobs": true, "top_logprobs": 7})").top_logprobs, 7);
  EXPECT_EQ(ParseChat(hi + R"(, "n_probs": 3})").n_probs, 3);
  EXPECT_NE(ChatError(hi + R"(, "top_logprobs": 2})").find("top_logprobs needs logprobs"),
            std::string::npos);
  EXPECT_NE(ChatError(hi + R"(, "logprobs": true, "top_logprobs": 21})").find("top_logprobs"),
            std::string::npos);
  GenerationRequest completion;
  ParseCompletionBody(ParseJsonObject(R"({"prompt": "x", "logprobs": 4})"), completion);
  EXPECT_EQ(completion.top_logprobs, 4);

  const GenerationRequest none = ParseChat(hi + R"(, "reasoning_effort": "minimal"})");
  EXPECT_FALSE(none.thinking);
  const GenerationRequest medium = ParseChat(hi + R"(, "reasoning_effort": "medium"})");
  EXPECT_TRUE(medium.thinking);
  EXPECT_EQ(medium.thinking_budget, 4096);
  EXPECT_EQ(ParseChat(hi + R"(, "reasoning_effort": "high"})").thinking_budget, 16384);
  EXPECT_NE(ChatError(hi + R"(, "reasoning_effort": "max"})").find("reasoning_effort"),
            std::string::npos);
  const GenerationRequest off = ParseChat(hi + R"(, "reasoning_budget": 0})");
  EXPECT_FALSE(off.thinking);
  EXPECT_EQ(ParseChat(hi + R"(, "reasoning_budget": -1})").thinking_budget, -1);
  const GenerationRequest budget = ParseChat(hi + R"(, "reasoning_budget": 50})");
  EXPECT_TRUE(budget.thinking);
  EXPECT_EQ(budget.thinking_budget, 50);
}

TEST(OpenAiJson, MalformedJsonNamesTheOffset) {
  try {
    ParseJsonObject(R"({"messages": [)");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("byte"), std::string::npos);
  }
  EXPECT_THROW(ParseJsonObject("[1, 2]"), Error);
  // A number beyond a double is nlohmann's out_of_range, not a parse_error (found by
  // fuzz_openai_request): still a 400-kind Error, never an escaping exception.
  try {
    ParseJsonObject(R"({"temperature": 2222E222222222222222222222})");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("malformed JSON"), std::string::npos);
  }
}

TEST(OpenAiJson, ParsesEveryCompletionPromptForm) {
  auto parse = [](const std::string& body) {
    GenerationRequest r;
    ParseCompletionBody(ParseJsonObject(body), r);
    return r;
  };
  EXPECT_EQ(parse(R"({"prompt": "abc"})").prompt, "abc");
  EXPECT_FALSE(parse(R"({"prompt": "abc"})").chat);
  EXPECT_EQ(parse(R"({"prompt": ["abc"]})").prompt, "abc");
  EXPECT_EQ(parse(R"({"prompt": [1, 2, 3]})").prompt_tokens, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(parse(R"({"prompt": [[4, 5]]})").prompt_tokens, (std::vector<int32_t>{4, 5}));
  EXPECT_THROW(parse(R"({"prompt": ["a", "b"]})"), Error);
  EXPECT_THROW(parse(R"({"prompt": 7})"), Error);
  EXPECT_THROW(parse(R"({"prompt": [1, "x"]})"), Error);
  EXPECT_THROW(parse(R"({})"), Error);
}

TEST(OpenAiJson, ChatCompletionCarriesToolCallsUsageAndTimings) {
  GenerationTotals totals;
  totals.prompt_tokens = 10;
  totals.cached_prompt_tokens = 4;
  totals.completion_tokens = 5;
  ChatOutput out;
  out.tool_calls.push_back({"call_x", "get_weather", R"({"city":"Paris"})"});
  const Json j = ChatCompletionJson({"chatcmpl-1", 7, "model.gguf"}, out, totals, {{"t", 1}});
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "model.gguf");
  const Json& choice = j["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null());
  EXPECT_EQ(choice["message"]["tool_calls"][0]["id"], "call_x");
  EXPECT_EQ(choice["message"]["tool_calls"][0]["type"], "function");
  EXPECT_EQ(choice["message"]["tool_calls"][0]["function"]["arguments"], R"({"city":"Paris"})");
  EXPECT_FALSE(choice["message"]["tool_calls"][0].contains("index"));
  EXPECT_EQ(j["usage"]["prompt_tokens"], 10);
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_EQ(j["usage"]["total_tokens"], 15);
  EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(j["timings"]["t"], 1);

  totals.finish = FinishReason::kLength;
  EXPECT_STREQ(OpenAiFinishReason(totals, true), "length");
  totals.finish = FinishReason::kStopString;
  EXPECT_STREQ(OpenAiFinishReason(totals, false), "stop");
  const Json chunk = ChatChunkJson({"c", 1, "m"}, {{"content", "hi"}}, nullptr);
  EXPECT_EQ(chunk["object"], "chat.completion.chunk");
  EXPECT_EQ(chunk["choices"][0]["delta"]["content"], "hi");
  EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
  EXPECT_EQ(OpenAiToolCall({"id", "f", ""}, 3)["index"], 3);
  EXPECT_EQ(OpenAiToolCall({"id", "f", ""}, 3)["function"]["arguments"], "{}");
}

}  // namespace
}  // namespace tandem::server
