// Every JSON-body route refuses a field it does not read with a 400 naming the field's path, at
// the top level and in the objects it reads, and accepts a no-op field only with a value that
// changes nothing; what the official SDKs send back (an assistant turn as OpenAI returns it, a
// cache_control breakpoint) is accepted.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "server/server_app_fixture.h"

namespace tandem::server {
namespace {

using testing::ServerAppTest;

class UnknownFieldsTest : public ServerAppTest {
 protected:
  void SetUp() override {
    ServerAppTest::SetUp();
    context_.slot_save_path = std::filesystem::temp_directory_path().string();
    Script("fine");
    Ready();
  }

  // POSTs `body` to `target` (a path and an optional "?query").
  HttpResponse PostTo(const std::string& target, const std::string& body) {
    const size_t q = target.find('?');
    HttpRequest r;
    r.method = "POST";
    r.path = target.substr(0, q);
    if (q != std::string::npos) r.query = target.substr(q + 1);
    r.body = body;
    return app_->Handle(r);
  }

  // The error message of a 400 answer to `body` at `path` ("" and a test failure otherwise).
  std::string Refusal(const std::string& path, const std::string& body) {
    const HttpResponse r = PostTo(path, body);
    EXPECT_EQ(r.status, 400) << path << " " << body << " -> " << r.body;
    if (r.status != 400) return "";
    return BodyJson(r)["error"]["message"].get<std::string>();
  }

  // Expects a 400 whose message starts with `prefix`.
  void ExpectRefused(const std::string& path, const std::string& body, const std::string& prefix) {
    const std::string message = Refusal(path, body);
    EXPECT_EQ(message.substr(0, prefix.size()), prefix) << path << " " << body;
  }

  void ExpectAccepted(const std::string& path, const std::string& body) {
    const HttpResponse r = PostTo(path, body);
    EXPECT_EQ(r.status, 200) << path << " " << body << " -> " << r.body;
    backend_.WaitIdle();
  }
};

constexpr const char* kUnknown = ": unknown field (not supported by tandem)";

TEST_F(UnknownFieldsTest, ChatCompletions) {
  const std::string p = "/v1/chat/completions";
  const std::string user = R"("messages": [{"role": "user", "content": "hi"}])";
  ExpectRefused(p, "{" + user + R"(, "max_tokenz": 5})", std::string("max_tokenz") + kUnknown);
  ExpectRefused(p, R"({"messages": [{"role": "user", "content": "hi", "foo": 1}]})",
                std::string("messages[0].foo") + kUnknown);
  ExpectRefused(p,
                R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a",
                    "foo": 1}]}]})",
                std::string("messages[0].content[0].foo") + kUnknown);
  ExpectRefused(p,
                R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant",
                    "tool_calls": [{"id": "c", "type": "function",
                    "function": {"name": "f", "arguments": "{}", "foo": 1}}]}]})",
                std::string("messages[1].tool_calls[0].function.foo") + kUnknown);
  ExpectRefused(
      p, "{" + user + R"(, "tools": [{"type": "function", "function": {"name": "f", "foo": 1}}]})",
      std::string("tools[0].function.foo") + kUnknown);
  ExpectRefused(p, "{" + user + R"(, "tool_choice": {"type": "function", "function": {"name": "f"},
                    "foo": 1}})",
                std::string("tool_choice.foo") + kUnknown);
  ExpectRefused(p,
                "{" + user +
                    R"(, "response_format": {"type": "json_schema",
                    "json_schema": {"name": "a", "schema": {}, "foo": 1}}})",
                std::string("response_format.json_schema.foo") + kUnknown);
  ExpectRefused(p, "{" + user + R"(, "stream_options": {"include_usage": true, "foo": 1}})",
                std::string("stream_options.foo") + kUnknown);
  ExpectRefused(p, "{" + user + R"(, "speculative": {"enabled": true, "foo": 1}})",
                std::string("speculative.foo") + kUnknown);
  ExpectRefused(p, "{" + user + R"(, "chat_template_kwargs": {"foo": 1}})",
                std::string("chat_template_kwargs.foo") + kUnknown);
  // No-op fields with a value that would change something.
  ExpectRefused(p, "{" + user + R"(, "store": true})", "store: tandem stores no completions");
  ExpectRefused(p, "{" + user + R"(, "service_tier": "flex"})", "service_tier: tandem has one");
  ExpectRefused(p, "{" + user + R"(, "user": 7})", "user: expected a string");
  ExpectRefused(p, "{" + user + R"(, "modalities": ["text", "audio"]})",
                "modalities: tandem answers with text only");
  ExpectRefused(p, "{" + user + R"(, "stream_options": {"include_obfuscation": true}})",
                "stream_options.include_obfuscation: tandem pads no stream chunks");
  ExpectRefused(p, "{" + user + R"(, "mirostat": 2})", "mirostat: not supported by tandem");
  ExpectRefused(p,
                R"({"messages": [{"role": "user", "content": "a"},
                    {"role": "assistant", "content": null, "refusal": "I cannot"}]})",
                "messages[1].refusal: tandem's chat format has no refusal turn");
}

TEST_F(UnknownFieldsTest, ChatCompletionsAcceptsTheNoOpsAndWhatClientsSendBack) {
  ExpectAccepted("/v1/chat/completions", R"({
    "model": "tiny", "n": 1, "user": "u1", "store": false, "metadata": {"k": "v"},
    "service_tier": "auto", "prompt_cache_key": "k", "safety_identifier": "s",
    "modalities": ["text"], "verbosity": "medium", "parallel_tool_calls": true,
    "stream_options": {"include_usage": true, "include_obfuscation": false},
    "mirostat": 0, "typical_p": 1, "cache_prompt": true,
    "messages": [
      {"role": "system", "content": "be brief", "name": "rules"},
      {"role": "user", "content": "hi", "name": "ann"},
      {"role": "assistant", "content": null, "refusal": null, "audio": null,
       "function_call": null, "annotations": [], "reasoning_content": "hm",
       "tool_calls": [{"index": 0, "id": "c1", "type": "function",
                       "function": {"name": "f", "arguments": "{}"}}]},
      {"role": "tool", "tool_call_id": "c1", "name": "f", "content": "ok"}],
    "tools": [{"type": "function", "function": {"name": "f", "description": "d",
               "parameters": {"type": "object"}, "strict": true}}]})");
}

TEST_F(UnknownFieldsTest, Completions) {
  for (const std::string p : {"/v1/completions", "/completion"}) {
    ExpectRefused(p, R"({"prompt": "a", "max_tokenz": 5})", std::string("max_tokenz") + kUnknown);
    ExpectRefused(p, R"({"prompt": "a", "speculative": {"draft_maxx": 2}})",
                  std::string("speculative.draft_maxx") + kUnknown);
    ExpectRefused(p, R"({"prompt": "a", "user": ["u"]})", "user: expected a string");
    ExpectRefused(p, R"({"prompt": "a", "id_slot": 1})", "id_slot: not supported by tandem");
    ExpectAccepted(p, R"({"prompt": "a", "user": "u", "id_slot": -1, "n_keep": 0})");
  }
  // Chat-only fields are not completion fields; native-only fields not OpenAI's.
  ExpectRefused("/v1/completions", R"({"prompt": "a", "tools": []})",
                std::string("tools") + kUnknown);
  ExpectRefused("/v1/completions", R"({"prompt": "a", "return_tokens": true})",
                std::string("return_tokens") + kUnknown);
  ExpectRefused("/completion", R"({"prompt": {"prompt_string": "a", "foo": 1}})",
                std::string("prompt.foo") + kUnknown);
  ExpectAccepted("/completion", R"({"prompt": {"prompt_string": "a"}, "return_tokens": true})");
}

TEST_F(UnknownFieldsTest, AnthropicMessagesAndCountTokens) {
  const std::string p = "/v1/messages";
  const std::string head = R"("max_tokens": 8, "messages": [{"role": "user", "content": "hi"}])";
  ExpectRefused(p, "{" + head + R"(, "max_tokenz": 5})", std::string("max_tokenz") + kUnknown);
  ExpectRefused("/v1/messages/count_tokens",
                R"({"messages": [{"role": "user", "content": "hi"}], "foo": 1})",
                std::string("foo") + kUnknown);
  ExpectRefused(p,
                R"({"max_tokens": 8, "messages": [{"role": "user", "content": "hi", "foo": 1}]})",
                std::string("messages[0].foo") + kUnknown);
  ExpectRefused(p,
                R"({"max_tokens": 8, "messages": [{"role": "user",
                    "content": [{"type": "text", "text": "a", "foo": 1}]}]})",
                std::string("messages[0].content[0].foo") + kUnknown);
  ExpectRefused(p,
                R"({"max_tokens": 8, "messages": [{"role": "user", "content": "a"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f",
                    "input": {}, "foo": 1}]}]})",
                std::string("messages[1].content[0].foo") + kUnknown);
  ExpectRefused(p, "{" + head + R"(, "system": [{"type": "text", "text": "s", "foo": 1}]})",
                std::string("system[0].foo") + kUnknown);
  ExpectRefused(p, "{" + head + R"(, "thinking": {"type": "enabled", "foo": 1}})",
                std::string("thinking.foo") + kUnknown);
  ExpectRefused(p, "{" + head + R"(, "tool_choice": {"type": "auto", "foo": 1}})",
                std::string("tool_choice.foo") + kUnknown);
  ExpectRefused(p, "{" + head + R"(, "tools": [{"name": "f", "input_schema": {}, "foo": 1}]})",
                std::string("tools[0].foo") + kUnknown);
  // No-op fields with a value that would change something.
  ExpectRefused(p, "{" + head + R"(, "metadata": {"user_id": "u", "foo": "x"}})",
                "metadata: expected {\"user_id\": string}");
  ExpectRefused(p, "{" + head + R"(, "service_tier": "priority"})", "service_tier: tandem has one");
  ExpectRefused(
      p,
      "{" + head +
          R"(, "system": [{"type": "text", "text": "s", "cache_control": {"type": "x"}}]})",
      "system[0].cache_control: expected {\"type\": \"ephemeral\"}");
  ExpectRefused(p, "{" + head + R"(, "xtc_probability": 0.5})",
                "xtc_probability: not supported by tandem");
}

TEST_F(UnknownFieldsTest, AnthropicAcceptsCacheControlAndWhatItSendsBack) {
  ExpectAccepted("/v1/messages", R"({
    "model": "tiny", "max_tokens": 8, "metadata": {"user_id": "u"}, "service_tier": "auto",
    "system": [{"type": "text", "text": "be brief",
                "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
    "tools": [{"name": "f", "description": "d", "input_schema": {"type": "object"},
               "cache_control": {"type": "ephemeral"}}],
    "messages": [
      {"role": "user", "content": [{"type": "text", "text": "hi",
                                    "cache_control": {"type": "ephemeral"}}]},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "hm", "signature": ""},
        {"type": "text", "text": "calling", "citations": null},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1",
                                    "content": [{"type": "text", "text": "ok"}],
                                    "is_error": false, "cache_control": {"type": "ephemeral"}}]}]})");
}

TEST_F(UnknownFieldsTest, Responses) {
  ExpectRefused("/v1/responses", R"({"input": "a", "max_tokenz": 5})",
                std::string("max_tokenz") + kUnknown);
  ExpectRefused("/v1/responses",
                R"({"input": [{"role": "assistant", "content": [{"type": "output_text",
                    "text": "a", "foo": 1}]}, {"role": "user", "content": "b"}]})",
                std::string("input[0].content[0].foo") + kUnknown);
  ExpectAccepted("/v1/responses",
                 R"({"input": [{"role": "assistant", "content": [{"type": "output_text",
                     "text": "a", "annotations": [], "logprobs": []}]},
                     {"role": "user", "content": "b"}]})");
}

TEST_F(UnknownFieldsTest, TokenizeDetokenizeAndSlots) {
  ExpectRefused("/tokenize", R"({"contents": "a"})", std::string("contents") + kUnknown);
  ExpectRefused("/detokenize", R"({"tokens": [1], "with_pieces": true})",
                std::string("with_pieces") + kUnknown);
  ExpectRefused("/slots/0?action=save", R"({"filename": "a.bin", "file": "b.bin"})",
                std::string("file") + kUnknown);
  ExpectRefused("/slots/0?action=restore", R"({"filename": "a.bin", "id_slot": 0})",
                std::string("id_slot") + kUnknown);
  ExpectRefused("/slots/0?action=erase", R"({"filename": "a.bin"})",
                std::string("filename") + kUnknown);
}

}  // namespace
}  // namespace tandem::server
