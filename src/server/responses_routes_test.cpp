// POST /v1/responses end to end without sockets: ServerApp::Handle over a scripted backend, the
// whole response and the typed event stream of reasoning, text and a function call; the response
// store: previous_response_id (its prompt against the chat route's for the same messages), GET
// and DELETE /v1/responses/{id}, eviction, the byte limit, and a server without a store.
#include <gtest/gtest.h>

#include <memory>
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

class ResponsesStoreTest : public ServerAppTest {
 protected:
  void ReadyWithStore(size_t count, size_t bytes) {
    context_.responses = std::make_shared<ResponseStore>(count, bytes);
    Ready();
  }

  // The prompt the chat route builds for `messages` (a JSON array).
  std::vector<int32_t> ChatPrompt(const std::string& messages) {
    const HttpResponse r = Post("/v1/chat/completions", R"({"messages": )" + messages + "}");
    EXPECT_EQ(r.status, 200) << r.body;
    return backend_.last_prompt();
  }

  static std::string Message(const HttpResponse& r) {
    return BodyJson(r)["error"]["message"].get<std::string>();
  }
};

TEST_F(ResponsesStoreTest, PreviousResponseIdContinuesTheConversationAsTheChatRouteWould) {
  ReadyWithStore(8, 1 << 20);
  Script("Hi there");
  HttpResponse r = Post("/v1/responses", R"({"input": "hi", "instructions": "sys"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json first = BodyJson(r);
  EXPECT_EQ(first["store"], true);  // no "store" in the body: stored, as OpenAI does
  EXPECT_TRUE(first["previous_response_id"].is_null());
  const std::string id1 = first["id"];

  // Instructions are not carried over: the second turn has none.
  Script("Sure");
  r = Post("/v1/responses", R"({"input": "again", "previous_response_id": ")" + id1 + "\"}");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json second = BodyJson(r);
  EXPECT_EQ(second["previous_response_id"], id1);
  EXPECT_TRUE(second["instructions"].is_null());
  const std::vector<int32_t> chained = backend_.last_prompt();
  EXPECT_EQ(chained, ChatPrompt(R"([{"role": "user", "content": "hi"},
    {"role": "assistant", "content": "Hi there"}, {"role": "user", "content": "again"}])"));

  // A chain of three, with items as input and this turn's own instructions first.
  r = Post("/v1/responses", R"({"instructions": "new", "previous_response_id": ")" +
                                second["id"].get<std::string>() +
                                R"(", "input": [{"role": "user", "content": "more"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(backend_.last_prompt(), ChatPrompt(R"([{"role": "system", "content": "new"},
    {"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hi there"},
    {"role": "user", "content": "again"}, {"role": "assistant", "content": "Sure"},
    {"role": "user", "content": "more"}])"));
}

// A stored response belongs to the key that stored it: another key (or none) can neither read,
// continue nor delete it.
TEST_F(ResponsesStoreTest, AnotherApiKeyFindsNothing) {
  ReadyWithStore(8, 1 << 20);
  Script("Hi there");
  const HttpResponse created =
      Post("/v1/responses", R"({"input": "hi", "store": true})", {{"x-api-key", "key-a"}});
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = BodyJson(created)["id"];
  auto as = [&](const std::string& method, const std::string& key) {
    HttpRequest r;
    r.method = method;
    r.path = "/v1/responses/" + id;
    if (!key.empty()) r.headers["authorization"] = "Bearer " + key;
    return app_->Handle(r);
  };
  EXPECT_EQ(as("GET", "key-b").status, 404);
  EXPECT_EQ(as("GET", "").status, 404);
  EXPECT_EQ(as("DELETE", "key-b").status, 404);
  const HttpResponse continued =
      Post("/v1/responses", R"({"input": "more", "previous_response_id": ")" + id + R"("})",
           {{"x-api-key", "key-b"}});
  EXPECT_EQ(continued.status, 404) << continued.body;
  EXPECT_EQ(as("GET", "key-a").status, 200);  // Bearer and x-api-key present the same key
  EXPECT_EQ(as("DELETE", "key-a").status, 200);
}

TEST_F(ResponsesStoreTest, GetReturnsTheStoredResponseAndDeleteRemovesIt) {
  ReadyWithStore(8, 1 << 20);
  Script("Hi there");
  const HttpResponse created = Post("/v1/responses", R"({"input": "hi", "store": true})");
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = BodyJson(created)["id"];
  HttpResponse r = Get("/v1/responses/" + id);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(r.body, created.body);  // as it was returned, byte for byte

  r = Delete("/v1/responses/" + id);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(BodyJson(r), Json::parse(R"({"id": ")" + id +
                                     R"(", "object": "response.deleted", "deleted": true})"));
  r = Get("/v1/responses/" + id);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Message(r).rfind("Response with id '" + id + "' not found", 0), 0u) << Message(r);
  EXPECT_EQ(Delete("/v1/responses/" + id).status, 404);
  r = Post("/v1/responses", R"({"input": "x", "previous_response_id": ")" + id + "\"}");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(
      Message(r).rfind("previous_response_id: Previous response with id '" + id + "' not found", 0),
      0u)
      << Message(r);

  EXPECT_EQ(Send("GET", "/v1/responses/" + id + "/input_items").status, 404);
  r = Send("GET", "/v1/responses/" + id, "stream=true");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(Message(r).find("query parameters are not supported"), std::string::npos);
  EXPECT_EQ(Post("/v1/responses/" + id, "{}").status, 405);
}

TEST_F(ResponsesStoreTest, StoreFalseKeepsNothing) {
  ReadyWithStore(8, 1 << 20);
  Script("Hi there");
  const HttpResponse r = Post("/v1/responses", R"({"input": "hi", "store": false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(BodyJson(r)["store"], false);
  EXPECT_EQ(Get("/v1/responses/" + BodyJson(r)["id"].get<std::string>()).status, 404);
  EXPECT_EQ(context_.responses->size(), 0u);
}

TEST_F(ResponsesStoreTest, AStreamedResponseIsStoredOnceComplete) {
  ReadyWithStore(8, 1 << 20);
  Script("Hi there");
  HttpResponse r = Post("/v1/responses", R"({"input": "hi", "stream": true})");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::vector<Json> events = DataLines(Drain(r));
  ASSERT_FALSE(events.empty());
  const Json& final = events.back()["response"];
  EXPECT_EQ(events.back()["type"], "response.completed");
  EXPECT_EQ(final["store"], true);
  const HttpResponse stored = Get("/v1/responses/" + final["id"].get<std::string>());
  ASSERT_EQ(stored.status, 200) << stored.body;
  EXPECT_EQ(BodyJson(stored), final);
  EXPECT_EQ(BodyJson(stored)["output"][0]["content"][0]["text"], "Hi there");

  // A stream that continues it.
  Script("Sure");
  r = Post("/v1/responses", R"({"input": "again", "stream": true, "previous_response_id": ")" +
                                final["id"].get<std::string>() + "\"}");
  ASSERT_EQ(r.status, 200) << r.body;
  Drain(r);
  EXPECT_EQ(backend_.last_prompt(), ChatPrompt(R"([{"role": "user", "content": "hi"},
    {"role": "assistant", "content": "Hi there"}, {"role": "user", "content": "again"}])"));
}

TEST_F(ResponsesStoreTest, TheLeastRecentlyUsedResponseIsEvictedByCount) {
  ReadyWithStore(2, 1 << 20);
  Script("Hi there");
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    if (i == 2) {
      ASSERT_EQ(Get("/v1/responses/" + ids[0]).status, 200);  // ids[1] is now the oldest
    }
    const HttpResponse r = Post("/v1/responses", R"({"input": "hi"})");
    ASSERT_EQ(r.status, 200) << r.body;
    ids.push_back(BodyJson(r)["id"]);
  }
  EXPECT_EQ(Get("/v1/responses/" + ids[0]).status, 200);
  EXPECT_EQ(Get("/v1/responses/" + ids[1]).status, 404);
  EXPECT_EQ(Get("/v1/responses/" + ids[2]).status, 200);
}

TEST_F(ResponsesStoreTest, AResponseLargerThanTheByteLimitIsNotStoredAndSaysSo) {
  ReadyWithStore(8, 300);  // a response object alone is larger
  Script("Hi there");
  const HttpResponse r = Post("/v1/responses", R"({"input": "hi"})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = BodyJson(r);
  EXPECT_EQ(j["store"], false);
  ASSERT_TRUE(j.contains("warnings")) << r.body;
  EXPECT_NE(j["warnings"].back().get<std::string>().find("--responses-store-bytes"),
            std::string::npos);
  EXPECT_EQ(Get("/v1/responses/" + j["id"].get<std::string>()).status, 404);
  EXPECT_EQ(context_.responses->size(), 0u);
}

TEST_F(ResponsesStoreTest, WithoutAStoreAskingForOneIsA400AndGetIsA404) {
  Ready();  // context_.responses is null: the store is off
  Script("Hi there");
  HttpResponse r = Post("/v1/responses", R"({"input": "hi"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(BodyJson(r)["store"], false);
  r = Post("/v1/responses", R"({"input": "hi", "store": true})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Message(r).rfind("store: this server keeps no responses", 0), 0u) << Message(r);
  r = Post("/v1/responses", R"({"input": "hi", "previous_response_id": "resp_1"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Message(r).rfind("previous_response_id: this server keeps no responses", 0), 0u);
  EXPECT_NE(Message(r).find("--responses-store-count 0"), std::string::npos);
  r = Get("/v1/responses/resp_1");
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(Message(r).find("keeps no responses"), std::string::npos);
  EXPECT_EQ(Delete("/v1/responses/resp_1").status, 404);
}

}  // namespace
}  // namespace tandem::server
