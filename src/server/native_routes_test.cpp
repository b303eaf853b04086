// llama-server's native /completion: its response shape, streamed and whole, its stop types and
// its field names reaching the engine.
#include <gtest/gtest.h>

#include "server/server_app_fixture.h"

namespace tandem::server {
namespace {

using testing::ServerAppTest;

TEST_F(ServerAppTest, NativeCompletionAnswersInLlamaServersShape) {
  Ready();
  Script("Hello\nworld");
  const HttpResponse r = Post("/completion", R"({"prompt": "ab", "n_predict": 3,
                                                  "temperature": 0, "return_tokens": true})");
  ASSERT_EQ(r.status, 200) << r.body;
  const Json j = BodyJson(r);
  const std::vector<int32_t> first3(backend_.script.begin(), backend_.script.begin() + 3);
  EXPECT_EQ(j["content"], tokenizer_->Decode(first3));
  EXPECT_EQ(j["tokens"].get<std::vector<int32_t>>(), first3);
  EXPECT_EQ(j["stop"], true);
  EXPECT_EQ(j["stop_type"], "limit");
  EXPECT_EQ(j["stopping_word"], "");
  EXPECT_EQ(j["tokens_predicted"], 3);
  EXPECT_EQ(j["tokens_evaluated"], backend_.last_prompt().size());
  EXPECT_EQ(j["tokens_cached"], backend_.last_prompt().size() + 2);
  EXPECT_EQ(j["model"], "tiny.gguf");
  EXPECT_EQ(j["prompt"], "<bos>ab");
  EXPECT_EQ(j["has_new_line"], j["content"].get<std::string>().find('\n') != std::string::npos);
  EXPECT_EQ(j["generation_settings"]["n_predict"], 3);
  EXPECT_EQ(j["generation_settings"]["temperature"], 0.0);
  EXPECT_EQ(j["timings"]["predicted_n"], 3);
  EXPECT_FALSE(j.contains("choices"));
  EXPECT_EQ(backend_.last_params().n_predict, 3);

  // Without return_tokens the ids are left out, as llama-server does; the whole script ends
  // with the end-of-turn token: "eos".
  const Json all = BodyJson(Post("/completion", R"({"prompt": "ab"})"));
  EXPECT_TRUE(all["tokens"].empty());
  EXPECT_EQ(all["content"], "Hello\nworld");
  EXPECT_EQ(all["stop_type"], "eos");
  EXPECT_EQ(all["has_new_line"], true);
}

TEST_F(ServerAppTest, NativeCompletionStopWordAndProbabilities) {
  Ready();
  Script("abc STOP def");
  const Json j =
      BodyJson(Post("/completion", R"({"prompt": "x", "stop": ["STOP"], "n_probs": 2})"));
  EXPECT_EQ(j["content"], "abc ");
  EXPECT_EQ(j["stop_type"], "word");
  EXPECT_EQ(j["stopping_word"], "STOP");
  EXPECT_EQ(backend_.last_params().top_logprobs, 2);
  // llama-server reads `logprobs: N` on this route as n_probs.
  Post("/completion", R"({"prompt": "x", "logprobs": 3})");
  EXPECT_EQ(backend_.last_params().top_logprobs, 3);
}

TEST_F(ServerAppTest, NativeCompletionStreamsContentThenTheFinalObject) {
  Ready();
  backend_.delay = std::chrono::milliseconds(1);
  Script("Hello world");
  HttpResponse r = Post("/completion", R"({"prompt": "ab", "stream": true})");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "text/event-stream");
  const std::string body = Drain(r);
  EXPECT_EQ(body.find("[DONE]"), std::string::npos);  // llama-server ends without it
  const std::vector<Json> events = DataLines(body);
  ASSERT_GE(events.size(), 2u);
  std::string content;
  std::vector<int32_t> ids;
  int predicted = 0;
  for (size_t i = 0; i + 1 < events.size(); ++i) {
    EXPECT_EQ(events[i]["stop"], false);
    content += events[i]["content"].get<std::string>();
    for (int32_t id : events[i]["tokens"].get<std::vector<int32_t>>()) ids.push_back(id);
    EXPECT_GT(events[i]["tokens_predicted"].get<int>(), predicted);
    predicted = events[i]["tokens_predicted"];
  }
  EXPECT_EQ(content, "Hello world");
  const std::vector<int32_t> text_ids(backend_.script.begin(), backend_.script.end() - 1);
  EXPECT_EQ(ids, text_ids);  // the end-of-turn token is not output
  const Json& last = events.back();
  EXPECT_EQ(last["stop"], true);
  EXPECT_EQ(last["content"], "");
  EXPECT_EQ(last["stop_type"], "eos");
  EXPECT_EQ(last["tokens_predicted"], backend_.script.size());
  EXPECT_TRUE(last["timings"].contains("predicted_per_second"));
}

TEST_F(ServerAppTest, NativeCompletionRefusesWhatItCannotRun) {
  context_.limits.n_ctx = 8;
  Ready();
  const HttpResponse long_prompt =
      Post("/completion", R"({"prompt": "a long prompt that does not fit the context"})");
  EXPECT_EQ(long_prompt.status, 400);
  EXPECT_NE(long_prompt.body.find("context"), std::string::npos);
  const HttpResponse mixed = Post("/completion", R"({"prompt": [1, "ab"]})");
  EXPECT_EQ(mixed.status, 400);
  EXPECT_NE(mixed.body.find("prompt"), std::string::npos);
  const HttpResponse slot = Post("/completion", R"({"prompt": "a", "id_slot": 2})");
  EXPECT_EQ(slot.status, 400);
  EXPECT_NE(slot.body.find("id_slot"), std::string::npos);
  EXPECT_EQ(Post("/completion", R"({"prompt": "a", "temperature": "hot"})").status, 400);
  EXPECT_EQ(Post("/completion", R"({"prompt": "a", "return_tokens": 1})").status, 400);
}

}  // namespace
}  // namespace tandem::server
