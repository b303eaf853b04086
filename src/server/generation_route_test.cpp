// The generating routes' skeleton: a dialect's hooks in their order, parts read before the
// opening held for it, tool-call ids with the dialect's prefix, the end marker, and a failed
// generation answered in the path's error shape, whole and streamed, on every generating route.
#include "server/generation_route.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "server/openai_json.h"
#include "server/server_app_fixture.h"

namespace tandem::server {
namespace {

using testing::ServerAppTest;

// Emits `script` at once, then a final event carrying `error` (a failed generation).
class FailingBackend : public Backend {
 public:
  std::vector<int32_t> script;
  std::string error = "boom";

  uint64_t Submit(EngineRequest request) override {
    GenerateResult result;
    result.prompt_tokens = static_cast<int>(request.prompt.size());
    for (int32_t token : script) {
      EngineEvent event;
      event.token = token;
      request.on_event(event);
    }
    EngineEvent final_event;
    final_event.final = true;
    final_event.result = &result;
    final_event.error = error;
    request.on_event(final_event);
    return 1;
  }
  void Cancel(uint64_t) override {}
  EngineMetrics Metrics() const override { return {}; }
};

// Records its hooks as events: {"hook": NAME, ...}.
class RecordingDialect final : public ApiDialect {
 public:
  explicit RecordingDialect(bool open_at_once)
      : ApiDialect({.done_marker = true, .open_at_once = open_at_once}, "t_") {}

  void Parse(const Json& body, GenerationRequest& request) override {
    ParseChatCompletionBody(body, request);
  }
  void Admitted(const GenerationRun& run) override { admitted_ = run.stream().prompt_tokens(); }
  Json Whole(GenerationRun&, const ChatOutput& output, const Json& timings) override {
    Json calls = Json::array();
    for (const ToolCall& c : output.tool_calls) calls.push_back(c.id);
    return {{"content", output.content}, {"calls", calls}, {"timings", timings}};
  }
  bool ReadyToOpen(const GenerationStream& stream) const override { return stream.finished(); }
  bool Open(GenerationRun&, SseWriter& out) override {
    return out.Event({{"hook", "open"}, {"admitted", admitted_}});
  }
  bool Parts(GenerationRun&, SseWriter& out, const ParsedDelta& delta) override {
    Json parts = Json::array();
    for (const ChatPart& p : delta.parts) {
      parts.push_back(p.kind == ChatPartKind::kToolCall ? p.tool_call.id : p.text);
    }
    return out.Event({{"hook", "parts"}, {"parts", parts}});
  }
  bool Finish(GenerationRun&, SseWriter& out, Json timings) override {
    return out.Event({{"hook", "finish"}, {"predicted_n", timings["predicted_n"]}});
  }

 private:
  int admitted_ = -1;
};

class GenerationRouteTest : public ServerAppTest {
 protected:
  HttpRequest Chat(bool stream) {
    HttpRequest r;
    r.method = "POST";
    r.path = "/v1/chat/completions";
    r.body = std::string(R"({"messages": [{"role": "user", "content": "x"}], "stream": )") +
             (stream ? "true}" : "false}");
    return r;
  }
};

constexpr char kCall[] = "<|tool_call>call:f{a:1}<tool_call|>";

TEST_F(GenerationRouteTest, HooksRunInOrderAndPartsWaitForTheOpening) {
  backend_.delay = std::chrono::milliseconds(1);
  Script(std::string("Hi ") + kCall, "<|tool_response>");
  HttpResponse r = ServeGeneration(context_, Chat(true), std::make_shared<RecordingDialect>(false));
  const std::string body = Drain(r);
  EXPECT_EQ(body.substr(body.size() - 14), "data: [DONE]\n\n");
  const std::vector<Json> events = DataLines(body);
  // Opened only once the generation finished: every part read before comes in one Parts.
  ASSERT_EQ(events.size(), 3u) << body;
  EXPECT_EQ(events[0]["hook"], "open");
  EXPECT_EQ(events[0]["admitted"], backend_.last_prompt().size());
  EXPECT_EQ(events[1]["hook"], "parts");
  ASSERT_EQ(events[1]["parts"].size(), 2u);
  EXPECT_EQ(events[1]["parts"][0], "Hi ");
  EXPECT_EQ(events[1]["parts"][1].get<std::string>().rfind("t_", 0), 0u);
  EXPECT_EQ(events[2]["hook"], "finish");
  EXPECT_EQ(events[2]["predicted_n"], backend_.script.size());

  // Opened at once: the opening is the first call's only write, before any token is read.
  HttpResponse at_once =
      ServeGeneration(context_, Chat(true), std::make_shared<RecordingDialect>(true));
  std::string first;
  ASSERT_TRUE(at_once.stream([&](std::string_view chunk) {
    first.append(chunk);
    return true;
  }));
  EXPECT_EQ(DataLines(first).size(), 1u);
  EXPECT_EQ(DataLines(first)[0]["hook"], "open");
  Drain(at_once);

  // Whole: the output with the dialect's tool-call ids, and the timings.
  const HttpResponse whole =
      ServeGeneration(context_, Chat(false), std::make_shared<RecordingDialect>(false));
  const Json j = BodyJson(whole);
  EXPECT_EQ(j["content"], "Hi ");
  ASSERT_EQ(j["calls"].size(), 1u);
  EXPECT_EQ(j["calls"][0].get<std::string>().rfind("t_", 0), 0u);
  EXPECT_EQ(j["timings"]["predicted_n"], backend_.script.size());
  EXPECT_EQ(whole.tokens(), static_cast<int>(backend_.script.size()));
}

TEST_F(GenerationRouteTest, FailedGenerationIsAnErrorInThePathsShape) {
  FailingBackend failing;
  failing.script = tokenizer_->Encode("Hello", {.add_special = false});
  context_.backend = &failing;
  Ready();
  const char* chat = R"({"messages": [{"role": "user", "content": "x"}]})";
  const char* message = R"({"max_tokens": 5, "messages": [{"role": "user", "content": "x"}]})";

  // Whole.
  const HttpResponse openai = Post("/v1/chat/completions", chat);
  EXPECT_EQ(openai.status, 500);
  EXPECT_EQ(BodyJson(openai)["error"]["message"], "generation failed: boom");
  const HttpResponse anthropic = Post("/v1/messages", message);
  EXPECT_EQ(anthropic.status, 500);
  EXPECT_EQ(BodyJson(anthropic)["type"], "error");
  EXPECT_EQ(BodyJson(anthropic)["error"]["message"], "generation failed: boom");
  EXPECT_EQ(Post("/completion", R"({"prompt": "x"})").status, 500);

  // Streamed: the parts so far, then the error event; OpenAI's stream still ends with [DONE].
  HttpResponse s = Post("/v1/chat/completions",
                        R"({"stream": true, "messages": [{"role": "user", "content": "x"}]})");
  std::string body = Drain(s);
  EXPECT_NE(body.find("Hello"), std::string::npos);
  EXPECT_EQ(body.substr(body.size() - 14), "data: [DONE]\n\n");
  std::vector<Json> data = DataLines(body);
  EXPECT_EQ(data.back()["error"]["message"], "generation failed: boom");
  EXPECT_EQ(data.back()["error"]["code"], 500);

  HttpResponse ms = Post("/v1/messages", R"({"max_tokens": 5, "stream": true,
                         "messages": [{"role": "user", "content": "x"}]})");
  body = Drain(ms);
  EXPECT_EQ(body.find("[DONE]"), std::string::npos);
  EXPECT_EQ(body.rfind("event: error\n"), body.rfind("event: "));
  data = DataLines(body);
  EXPECT_EQ(data.front()["type"], "message_start");
  EXPECT_EQ(data.back()["type"], "error");
  EXPECT_EQ(data.back()["error"]["type"], "api_error");

  HttpResponse ns = Post("/completion", R"({"prompt": "x", "stream": true})");
  body = Drain(ns);
  EXPECT_EQ(body.find("[DONE]"), std::string::npos);
  EXPECT_EQ(DataLines(body).back()["error"]["message"], "generation failed: boom");

  // A generation ended by a shutdown is a retryable 503.
  failing.error = kShuttingDownError;
  const HttpResponse shutdown = Post("/v1/chat/completions", chat);
  EXPECT_EQ(shutdown.status, 503);
  bool retry_after = false;
  for (const auto& [name, value] : shutdown.headers) retry_after |= name == "Retry-After";
  EXPECT_TRUE(retry_after);
}

}  // namespace
}  // namespace tandem::server
