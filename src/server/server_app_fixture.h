// The test fixture of the request path without sockets: ServerApp::Handle over a scripted
// backend (server_test_util.h), with helpers to post, drain streams and read SSE payloads.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "server/server_app.h"
#include "server/server_test_util.h"

namespace tandem::server::testing {

class ServerAppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ = testing::MakeTestTokenizer();
    for (int32_t id : tokenizer_->eog_ids()) backend_.eog.insert(id);
    context_.backend = &backend_;
    context_.tokenizer = tokenizer_.get();
    context_.limits.n_ctx = 256;
    context_.model_id = "tiny.gguf";
    context_.model_names = {"tiny.gguf", "tiny"};
  }

  void Ready(ServerOptions options = {}) {
    app_ = std::make_unique<ServerApp>(options);
    app_->SetReady(context_);
  }

  // The model "generates" `text` then an end-of-turn token.
  void Script(const std::string& text, const char* end = "<turn|>") {
    backend_.script = tokenizer_->Encode(text, {.add_special = false, .parse_special = true});
    backend_.script.push_back(tokenizer_->FindToken(end));
  }

  HttpResponse Post(const std::string& path, const std::string& body,
                    std::map<std::string, std::string> headers = {}) {
    HttpRequest r;
    r.method = "POST";
    r.path = path;
    r.body = body;
    r.headers = std::move(headers);
    return app_->Handle(r);
  }

  HttpResponse Get(const std::string& path) { return Send("GET", path); }
  HttpResponse Delete(const std::string& path) { return Send("DELETE", path); }

  HttpResponse Send(const std::string& method, const std::string& path, std::string query = "") {
    HttpRequest r;
    r.method = method;
    r.path = path;
    r.query = std::move(query);
    return app_->Handle(r);
  }

  // Runs a streamed body to its end; `fail_after` >= 0 makes writes fail after that many.
  static std::string Drain(HttpResponse& response, int fail_after = -1) {
    std::string body;
    int writes = 0;
    const ChunkWriter write = [&](std::string_view chunk) {
      if (fail_after >= 0 && writes >= fail_after) return false;
      ++writes;
      body.append(chunk);
      return true;
    };
    for (int i = 0; i < 10000 && response.stream(write); ++i) {
    }
    return body;
  }

  // The JSON payloads of "data: " lines, [DONE] excluded.
  static std::vector<Json> DataLines(const std::string& body) {
    std::vector<Json> out;
    size_t pos = 0;
    while ((pos = body.find("data: ", pos)) != std::string::npos) {
      const size_t end = body.find("\n\n", pos);
      const std::string data = body.substr(pos + 6, end - pos - 6);
      if (data != "[DONE]") out.push_back(Json::parse(data));
      pos = end;
    }
    return out;
  }

  static Json BodyJson(const HttpResponse& r) { return Json::parse(r.body); }

  std::unique_ptr<Tokenizer> tokenizer_;
  FakeBackend backend_;
  RouteContext context_;
  std::unique_ptr<ServerApp> app_;
};

}  // namespace tandem::server::testing
