// The request path end to end without sockets: ServerApp::Handle over a scripted backend.
#include "server/server_app.h"

#include <gtest/gtest.h>

#include "grammar/grammar_cache.h"
#include "server/server_app_fixture.h"
#include "server/sse.h"
#include "tokenizer/chat_format.h"

namespace tandem::server {
namespace {

using testing::FakeBackend;
using testing::ServerAppTest;

const char* kChat = R"({"model": "tiny.gguf", "messages": [{"role": "user", "content": "hi"}]})";

TEST_F(ServerAppTest, HealthIs503WhileLoadingThen200) {
  ServerApp loading({});
  HttpRequest health{"GET", "/health", {}, "", {}, ""};
  EXPECT_EQ(loading.Handle(health).status, 503);
  HttpRequest chat{"POST", "/v1/chat/completions", {}, kChat, {}, ""};
  EXPECT_EQ(loading.Handle(chat).status, 503);
  Ready();
  EXPECT_EQ(Get("/health").status, 200);
  EXPECT_EQ(BodyJson(Get("/health"))["status"], "ok");
  app_->BeginShutdown();
  EXPECT_EQ(Get("/health").status, 503);
  EXPECT_EQ(Post("/v1/chat/completions", kChat).status, 503);
}

TEST_F(ServerAppTest, ApiKeyGuardsEverythingButHealth) {
  ServerOptions options;
  options.api_keys = {"secret"};
  Ready(options);
  EXPECT_EQ(Get("/health").status, 200);
  const HttpResponse openai = Get("/v1/models");
  EXPECT_EQ(openai.status, 401);
  EXPECT_EQ(BodyJson(openai)["error"]["type"], "authentication_error");
  const HttpResponse anthropic = Post("/v1/messages", "{}", {{"x-api-key", "wrong"}});
  EXPECT_EQ(anthropic.status, 401);
  EXPECT_EQ(BodyJson(anthropic)["type"], "error");
  EXPECT_EQ(Post("/v1/messages/count_tokens", R"({"messages": [{"role": "user", "content": "x"}]})",
                 {{"x-api-key", "secret"}})
                .status,
            200);
  HttpRequest r{"GET", "/v1/models", {{"authorization", "Bearer secret"}}, "", {}, ""};
  EXPECT_EQ(app_->Handle(r).status, 200);
  r.headers["authorization"] = "Bearer secre";
  EXPECT_EQ(app_->Handle(r).status, 401);
}

TEST_F(ServerAppTest, RoutesLimitsAndModels) {
  ServerOptions options;
  options.max_body_bytes = 100;
  Ready(options);
  EXPECT_EQ(Get("/nope").status, 404);
  EXPECT_EQ(Get("/v1/chat/completions").status, 405);
  const HttpResponse big = Post("/v1/chat/completions", std::string(101, ' '));
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(Post("/v1/chat/completions", "{not json").status, 400);
  const HttpResponse model =
      Post("/v1/chat/completions",
           R"({"model": "gpt-4", "messages": [{"role": "user", "content": "x"}]})");
  EXPECT_EQ(model.status, 404);
  EXPECT_NE(BodyJson(model)["error"]["message"].get<std::string>().find("gpt-4"),
            std::string::npos);
  const Json models = BodyJson(Get("/v1/models"));
  EXPECT_EQ(models["data"][0]["id"], "tiny.gguf");
  EXPECT_EQ(models["object"], "list");
}

TEST_F(ServerAppTest, ChatCompletionReturnsContentUsageAndTimings) {
  Ready();
  Script("Hello world");
  const HttpResponse r = Post("/v1/chat/completions", kChat);
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = BodyJson(r);
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello world");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(j["usage"]["completion_tokens"], backend_.script.size());
  EXPECT_EQ(j["usage"]["prompt_tokens"], backend_.last_prompt().size());
  EXPECT_TRUE(j["timings"].contains("predicted_per_second"));
  EXPECT_EQ(j["timings"]["speculative"]["enabled"], false);
  // The prompt is the Gemma 4 chat rendering of the message.
  EXPECT_EQ(tokenizer_->Decode(backend_.last_prompt(), true),
            "<bos><|turn>user\nhi<turn|>\n<|turn>model\n");
}

// Tool-call text that does not parse stays content and is named in `warnings`, whole and
// streamed (the final chunk, Anthropic's message_delta), for both APIs.
TEST_F(ServerAppTest, ToolCallParseWarningsReachTheResponse) {
  Ready();
  Script("<|tool_call>call:f{a:[1,2}<tool_call|>");
  const auto has_warning = [](const Json& j) {
    return j.contains("warnings") && j["warnings"].size() == 1 &&
           j["warnings"][0].get<std::string>().find("malformed tool call") != std::string::npos;
  };
  const HttpResponse whole = Post("/v1/chat/completions", kChat);
  ASSERT_EQ(whole.status, 200) << whole.body;
  EXPECT_TRUE(has_warning(BodyJson(whole)));
  HttpResponse s = Post("/v1/chat/completions",
                        R"({"stream": true, "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_TRUE(s.stream);
  const std::vector<Json> chunks = DataLines(Drain(s));
  ASSERT_FALSE(chunks.empty());
  EXPECT_TRUE(has_warning(chunks.back()));
  const char* message = R"({"max_tokens": 50, "messages": [{"role": "user", "content": "x"}]})";
  const HttpResponse m = Post("/v1/messages", message);
  ASSERT_EQ(m.status, 200) << m.body;
  EXPECT_TRUE(has_warning(BodyJson(m)));
  HttpResponse ms = Post("/v1/messages", R"({"max_tokens": 50, "stream": true,
                          "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_TRUE(ms.stream);
  bool streamed = false;
  for (const Json& e : DataLines(Drain(ms))) {
    if (e["type"] == "message_delta") streamed = has_warning(e);
  }
  EXPECT_TRUE(streamed);
}

TEST_F(ServerAppTest, ToolCallTextBecomesToolCalls) {
  Ready();
  Script("<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>", "<|tool_response>");
  const HttpResponse r = Post("/v1/chat/completions", kChat);
  ASSERT_EQ(r.status, 200) << r.body;
  const Json choice = BodyJson(r)["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  EXPECT_TRUE(choice["message"]["content"].is_null());
  const Json call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(Json::parse(call["function"]["arguments"].get<std::string>())["city"], "Paris");
  EXPECT_EQ(call["id"].get<std::string>().rfind("call_", 0), 0u);

  // Streamed: one tool_calls delta with index 0, finish_reason tool_calls.
  HttpResponse s = Post("/v1/chat/completions",
                        R"({"stream": true, "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_TRUE(s.stream);
  const std::vector<Json> chunks = DataLines(Drain(s));
  int calls = 0;
  for (const Json& c : chunks) {
    if (c["choices"].empty()) continue;
    if (c["choices"][0]["delta"].contains("tool_calls")) {
      ++calls;
      EXPECT_EQ(c["choices"][0]["delta"]["tool_calls"][0]["index"], 0);
      EXPECT_EQ(c["choices"][0]["delta"]["tool_calls"][0]["function"]["name"], "get_weather");
    }
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(chunks.back()["choices"][0]["finish_reason"], "tool_calls");

  // Anthropic: a tool_use block with parsed input.
  const HttpResponse a =
      Post("/v1/messages", R"({"max_tokens": 50, "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_EQ(a.status, 200) << a.body;
  const Json m = BodyJson(a);
  EXPECT_EQ(m["stop_reason"], "tool_use");
  EXPECT_EQ(m["content"][0]["type"], "tool_use");
  EXPECT_EQ(m["content"][0]["input"]["city"], "Paris");
}

TEST_F(ServerAppTest, ParallelToolCallsFalseKeepsOneCallAndStops) {
  Ready();
  const std::string call = "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>";
  Script(call + call + "after", "<|tool_response>");
  const HttpResponse all = Post("/v1/chat/completions", kChat);
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(BodyJson(all)["choices"][0]["message"]["tool_calls"].size(), 2u);
  const HttpResponse one =
      Post("/v1/chat/completions",
           R"({"parallel_tool_calls": false, "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_EQ(one.status, 200) << one.body;
  const Json choice = BodyJson(one)["choices"][0];
  EXPECT_EQ(choice["message"]["tool_calls"].size(), 1u);
  EXPECT_EQ(choice["finish_reason"], "tool_calls");
  const HttpResponse a = Post("/v1/messages", R"({"max_tokens": 50,
      "tool_choice": {"type": "auto", "disable_parallel_tool_use": true},
      "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_EQ(a.status, 200) << a.body;
  const Json m = BodyJson(a);
  EXPECT_EQ(m["content"].size(), 1u);
  EXPECT_EQ(m["stop_reason"], "tool_use");
}

TEST_F(ServerAppTest, DeepJsonIs400NamingThePath) {
  Ready();
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  deep += "1";
  deep += std::string(100000, '}');
  const HttpResponse r =
      Post("/v1/chat/completions",
           R"({"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function",
          "function": {"name": "f", "parameters": )" +
               deep + "}}]}");
  ASSERT_EQ(r.status, 400);
  const std::string message = BodyJson(r)["error"]["message"];
  EXPECT_NE(message.find("tools[0].function.parameters.a.a"), std::string::npos) << message;
  EXPECT_NE(message.find("nesting deeper than 64"), std::string::npos) << message;
}

TEST_F(ServerAppTest, HostCheckAndCors) {
  ServerOptions options;
  options.allowed_hosts = {"localhost", "127.0.0.1", "::1"};
  options.cors_origins = {"http://app.example"};
  ServerApp app(options);
  app.SetReady(context_);
  HttpRequest get{"GET", "/v1/models", {{"host", "evil.example"}}, "", {}, ""};
  EXPECT_EQ(app.Handle(get).status, 403);
  get.headers["host"] = "[::1]:8080";
  EXPECT_EQ(app.Handle(get).status, 200);
  get.headers["origin"] = "http://app.example";
  const HttpResponse r = app.Handle(get);
  bool allowed = false;
  for (const auto& [name, value] : r.headers) {
    allowed |= name == "Access-Control-Allow-Origin" && value == "http://app.example";
  }
  EXPECT_TRUE(allowed);
  HttpRequest preflight{
      "OPTIONS",
      "/v1/chat/completions",
      {{"origin", "http://app.example"}, {"access-control-request-method", "POST"}},
      "",
      {},
      ""};
  EXPECT_EQ(app.Handle(preflight).status, 204);
  EXPECT_EQ(HostOfHeader("Example.COM:80"), "example.com");
}

TEST_F(ServerAppTest, ReasoningIsSeparated) {
  Ready();
  Script("<|channel>thought\nhmm<channel|>Hi");
  const Json j = BodyJson(Post("/v1/chat/completions", kChat));
  EXPECT_EQ(j["choices"][0]["message"]["reasoning_content"], "hmm");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hi");
}

TEST_F(ServerAppTest, StopStringEndsGenerationEarly) {
  Ready();
  backend_.delay = std::chrono::milliseconds(2);
  Script("abc STOP def ghi jkl mno pqr stu vwx yz abc def ghi jkl mno pqr stu vwx yz");
  const HttpResponse r =
      Post("/v1/chat/completions",
           R"({"stop": "STOP", "messages": [{"role": "user", "content": "x"}]})");
  const Json j = BodyJson(r);
  EXPECT_EQ(j["choices"][0]["message"]["content"], "abc ");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_LT(j["usage"]["completion_tokens"].get<int>(), static_cast<int>(backend_.script.size()));
}

TEST_F(ServerAppTest, OpenAiStreamHasRoleContentFinishUsageDone) {
  Ready();
  Script("Hello world");
  HttpResponse r = Post("/v1/chat/completions",
                        R"({"stream": true, "stream_options": {"include_usage": true},
                            "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/event-stream");
  const std::string body = Drain(r);
  EXPECT_EQ(body.substr(body.size() - 14), "data: [DONE]\n\n");
  const std::vector<Json> chunks = DataLines(body);
  ASSERT_GE(chunks.size(), 3u);
  EXPECT_EQ(chunks[0]["choices"][0]["delta"]["role"], "assistant");
  std::string content;
  for (const Json& c : chunks) {
    if (!c["choices"].empty()) content += c["choices"][0]["delta"].value("content", "");
  }
  EXPECT_EQ(content, "Hello world");
  const Json& last_choice = chunks[chunks.size() - 2];
  EXPECT_EQ(last_choice["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(last_choice.contains("timings"));
  EXPECT_TRUE(chunks.back()["choices"].empty());
  EXPECT_EQ(chunks.back()["usage"]["completion_tokens"], backend_.script.size());
}

TEST_F(ServerAppTest, AnthropicStreamFollowsTheEventSequence) {
  Ready();
  Script("<|channel>thought\nhm<channel|>Hi there");
  HttpResponse r = Post("/v1/messages", R"({"max_tokens": 50, "stream": true,
                        "messages": [{"role": "user", "content": "x"}]})");
  ASSERT_EQ(r.status, 200);
  const std::string body = Drain(r);
  std::vector<std::string> events;
  size_t pos = 0;
  while ((pos = body.find("event: ", pos)) != std::string::npos) {
    const size_t end = body.find('\n', pos);
    events.push_back(body.substr(pos + 7, end - pos - 7));
    pos = end;
  }
  ASSERT_GE(events.size(), 8u);
  EXPECT_EQ(events[0], "message_start");
  EXPECT_EQ(events[1], "ping");
  EXPECT_EQ(events[2], "content_block_start");
  EXPECT_EQ(events[events.size() - 2], "message_delta");
  EXPECT_EQ(events.back(), "message_stop");
  std::string thinking, text;
  int starts = 0, stops = 0;
  for (const Json& e : DataLines(body)) {
    if (e["type"] == "content_block_start") ++starts;
    if (e["type"] == "content_block_stop") ++stops;
    if (e["type"] != "content_block_delta") continue;
    thinking += e["delta"].value("thinking", "");
    text += e["delta"].value("text", "");
  }
  EXPECT_EQ(starts, 2);
  EXPECT_EQ(stops, 2);
  EXPECT_EQ(thinking, "hm");
  EXPECT_EQ(text, "Hi there");
}

TEST_F(ServerAppTest, ClientDisconnectCancelsGeneration) {
  Ready();
  backend_.delay = std::chrono::milliseconds(5);
  backend_.script.assign(400, tokenizer_->FindToken("a"));
  {
    HttpResponse r = Post("/v1/chat/completions",
                          R"({"stream": true, "messages": [{"role": "user", "content": "x"}]})");
    Drain(r, /*fail_after=*/3);
  }  // the response (and its stream) is gone, as after httplib's releaser
  backend_.WaitIdle();
  EXPECT_EQ(backend_.cancelled_count(), 1);
  EXPECT_LT(backend_.tokens_sent(), 400);
}

TEST_F(ServerAppTest, QueueFullIs503WithRetryAfter) {
  Ready();
  backend_.queue_full = true;
  const HttpResponse r = Post("/v1/chat/completions", kChat);
  EXPECT_EQ(r.status, 503);
  bool retry_after = false;
  for (const auto& [name, value] : r.headers) retry_after |= name == "Retry-After";
  EXPECT_TRUE(retry_after);
}

TEST_F(ServerAppTest, RequestsThatCannotRunAre400) {
  context_.limits.n_ctx = 8;
  Ready();
  const HttpResponse long_prompt =
      Post("/v1/chat/completions",
           R"({"messages": [{"role": "user", "content": "a long prompt that does not fit"}]})");
  EXPECT_EQ(long_prompt.status, 400);
  EXPECT_NE(long_prompt.body.find("context"), std::string::npos);
  const HttpResponse spec =
      Post("/v1/completions", R"({"prompt": "a", "speculative": {"enabled": true}})");
  EXPECT_EQ(spec.status, 400);
  EXPECT_NE(spec.body.find("speculative"), std::string::npos);
  EXPECT_EQ(Post("/v1/completions", R"({"prompt": [99999]})").status, 400);
  EXPECT_EQ(Post("/v1/completions", R"({"prompt": "a", "logit_bias": {"99999": 1}})").status, 400);
}

TEST_F(ServerAppTest, ParamsReachTheEngine) {
  context_.limits.spec.type = SpecType::kMtp;
  context_.limits.spec.draft_max = 8;
  Ready();
  Script("abcdefgh");
  const Json j = BodyJson(Post("/v1/completions", R"({"prompt": "ab", "max_tokens": 3,
                               "seed": 7, "temperature": 0, "speculative": {"draft_max": 2}})"));
  const GenerateParams p = backend_.last_params();
  EXPECT_EQ(p.n_predict, 3);
  EXPECT_EQ(p.sampling.seed, 7u);
  EXPECT_EQ(p.spec.type, SpecType::kMtp);
  EXPECT_EQ(p.spec.draft_max, 2);
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["timings"]["speculative"]["draft_max"], 2);
  EXPECT_EQ(backend_.last_prompt()[0], tokenizer_->vocab().bos_id);
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"enabled": false}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kNone);
}

// A thinking budget and an output constraint in one request: the engine gets both (the grammar
// starts after the thought channel, which closes within the budget).
TEST_F(ServerAppTest, ThinkingBudgetAndResponseFormatReachTheEngineTogether) {
  context_.grammars = std::make_shared<GrammarCache>(*tokenizer_);
  Ready();
  Script("{}");
  const HttpResponse r = Post("/v1/chat/completions", R"({"model": "tiny.gguf",
      "messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "low",
      "response_format": {"type": "json_object"}})");
  ASSERT_EQ(r.status, 200) << r.body;
  const GrammarConstraint& g = backend_.last_params().grammar;
  EXPECT_NE(g.grammar, nullptr);
  EXPECT_EQ(g.thought_budget, 1024);
  EXPECT_EQ(g.thought_open, tokenizer_->FindToken(chat_marker::kChannelOpen));
  EXPECT_EQ(g.thought_close, tokenizer_->FindToken(chat_marker::kChannelClose));
  // The budget alone, and the constraint alone with thinking on.
  Post("/v1/chat/completions", R"({"model": "tiny.gguf",
      "messages": [{"role": "user", "content": "hi"}], "reasoning_effort": "low"})");
  EXPECT_EQ(backend_.last_params().grammar.grammar, nullptr);
  EXPECT_EQ(backend_.last_params().grammar.thought_budget, 1024);
  Post("/v1/chat/completions", R"({"model": "tiny.gguf",
      "messages": [{"role": "user", "content": "hi"}],
      "chat_template_kwargs": {"enable_thinking": true}, "response_format": {"type": "json_object"}})");
  EXPECT_NE(backend_.last_params().grammar.grammar, nullptr);
  EXPECT_EQ(backend_.last_params().grammar.thought_budget, -1);
  EXPECT_GE(backend_.last_params().grammar.thought_open, 0);
}

TEST_F(ServerAppTest, PerRequestNgramSwitch) {
  context_.limits.spec.type = SpecType::kChain;
  Ready();
  Script("abcdefgh");
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"ngram": false}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kMtp);
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"ngram": true}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kChain);
  const HttpResponse bad =
      Post("/v1/completions", R"({"prompt": "ab", "speculative": {"ngram": 1}})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("speculative"), std::string::npos);
  context_.limits.spec.type = SpecType::kNgram;
  Ready();
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"ngram": false}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kNone);
  context_.limits.spec.type = SpecType::kMtp;
  Ready();
  const HttpResponse unavailable =
      Post("/v1/completions", R"({"prompt": "ab", "speculative": {"ngram": true}})");
  EXPECT_EQ(unavailable.status, 400);
  EXPECT_NE(unavailable.body.find("speculative.ngram"), std::string::npos);
}

TEST_F(ServerAppTest, PerRequestSuffixSwitchAndTenant) {
  context_.limits.spec.type = SpecType::kSuffixChain;
  Ready();
  Script("abcdefgh");
  Post("/v1/completions", R"({"prompt": "ab"})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kSuffixChain);
  EXPECT_TRUE(backend_.last_params().spec.suffix);
  EXPECT_EQ(backend_.last_params().tenant, "");  // no key: the shared tenant
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"suffix": false}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kChain);
  EXPECT_FALSE(backend_.last_params().spec.suffix);
  // Lookup off keeps suffix-chain, its planner told not to look up; both off: the assistant.
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"ngram": false}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kSuffixChain);
  EXPECT_FALSE(backend_.last_params().spec.ngram);
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"ngram": false, "suffix": false}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kMtp);
  // The tenant is the key the request presents (bearer first, as --api-key reads it).
  Post("/v1/completions", R"({"prompt": "ab"})", {{"x-api-key", "k1"}});
  EXPECT_EQ(backend_.last_params().tenant, "k1");
  Post("/v1/completions", R"({"prompt": "ab"})",
       {{"authorization", "Bearer k2"}, {"x-api-key", "k1"}});
  EXPECT_EQ(backend_.last_params().tenant, "k2");
  // A member tandem does not read, or a wrong type, is a 400 naming it.
  HttpResponse bad =
      Post("/v1/completions", R"({"prompt": "ab", "speculative": {"sufix": false}})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("speculative.sufix"), std::string::npos);
  bad = Post("/v1/completions", R"({"prompt": "ab", "speculative": {"suffix": "no"}})");
  EXPECT_EQ(bad.status, 400);
  context_.limits.spec.type = SpecType::kSuffix;
  Ready();
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"suffix": false}})");
  EXPECT_EQ(backend_.last_params().spec.type, SpecType::kNone);
  context_.limits.spec.type = SpecType::kChain;
  Ready();
  const HttpResponse unavailable =
      Post("/v1/completions", R"({"prompt": "ab", "speculative": {"suffix": true}})");
  EXPECT_EQ(unavailable.status, 400);
  EXPECT_NE(unavailable.body.find("speculative.suffix"), std::string::npos);
}

TEST_F(ServerAppTest, PerRequestDraftTreeWidth) {
  context_.limits.spec.type = SpecType::kChain;
  context_.limits.spec.tree_width = 3;  // --draft-tree 3
  Ready();
  Script("abcdefgh");
  Post("/v1/completions", R"({"prompt": "ab"})");
  EXPECT_EQ(backend_.last_params().spec.tree_width, 3);
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"tree": 0}})");
  EXPECT_EQ(backend_.last_params().spec.tree_width, 0);
  Post("/v1/completions", R"({"prompt": "ab", "speculative": {"tree": 4}})");
  EXPECT_EQ(backend_.last_params().spec.tree_width, 4);
  for (const char* body : {R"({"prompt": "ab", "speculative": {"tree": 1}})",
                           R"({"prompt": "ab", "speculative": {"tree": 5}})",
                           R"({"prompt": "ab", "speculative": {"tree": "wide"}})"}) {
    const HttpResponse bad = Post("/v1/completions", body);
    EXPECT_EQ(bad.status, 400) << body;
    EXPECT_NE(bad.body.find("speculative.tree"), std::string::npos) << bad.body;
  }
  context_.limits.spec.type = SpecType::kNgram;  // no assistant drafts: a tree cannot grow
  Ready();
  const HttpResponse unavailable =
      Post("/v1/completions", R"({"prompt": "ab", "speculative": {"tree": 2}})");
  EXPECT_EQ(unavailable.status, 400);
  EXPECT_NE(unavailable.body.find("does not draft trees"), std::string::npos) << unavailable.body;
}

TEST_F(ServerAppTest, TokenizeDetokenizeCountTokensAndMetrics) {
  Ready();
  const Json t = BodyJson(Post("/tokenize", R"({"content": "hello there"})"));
  ASSERT_TRUE(t["tokens"].is_array());
  const Json d = BodyJson(Post("/detokenize", Json{{"tokens", t["tokens"]}}.dump()));
  EXPECT_EQ(d["content"], "hello there");
  EXPECT_EQ(Post("/detokenize", R"({"tokens": [1e9]})").status, 400);
  const Json count = BodyJson(
      Post("/v1/messages/count_tokens", R"({"messages": [{"role": "user", "content": "hi"}]})"));
  EXPECT_EQ(
      count["input_tokens"],
      tokenizer_->Encode("<bos><|turn>user\nhi<turn|>\n<|turn>model\n", {.add_special = false})
          .size());
  app_->CountResponse(200);
  app_->CountResponse(404);
  const HttpResponse m = Get("/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_NE(m.body.find("tandem_requests_total{status=\"404\"} 1"), std::string::npos);
  EXPECT_NE(m.body.find("tandem_spec_drafted_tokens_total"), std::string::npos);
  EXPECT_NE(m.body.find("tandem_spec_accepted_at_position_total{position=\"1\"}"),
            std::string::npos);
  EXPECT_NE(m.body.find("tandem_spec_source_drafted_tokens_total{source=\"suffix\"} 0\n"),
            std::string::npos);
  EXPECT_NE(m.body.find("tandem_busy_slots"), std::string::npos);
  EXPECT_NE(m.body.find("tandem_slot_speculating{slot=\"0\"} 1\n"), std::string::npos);
  EXPECT_NE(m.body.find("tandem_slot_spec_drafted_tokens_total{slot=\"0\"} 6\n"),
            std::string::npos);
  EXPECT_NE(m.body.find("tandem_slot_spec_accepted_at_position_total{slot=\"0\",position=\"1\"}"),
            std::string::npos);
  EXPECT_NE(
      m.body.find("tandem_spec_batch_slot_steps_total{generating=\"1\",choice=\"draft\"} 5\n"),
      std::string::npos);
  EXPECT_NE(m.body.find("tandem_spec_batch_drafted_tokens_total{generating=\"1\"} 11\n"),
            std::string::npos);
  EXPECT_NE(
      m.body.find("tandem_spec_batch_slot_steps_total{generating=\"1\",choice=\"plain\"} 7\n"),
      std::string::npos);
  EXPECT_EQ(m.body.find("generating=\"2\""), std::string::npos);  // no steps at that size
}

}  // namespace
}  // namespace tandem::server
