// GET / and /web/NAME (the embedded chat page, public) and GET /props (behind the API key).
#include <gtest/gtest.h>

#include "server/server_app.h"
#include "server/server_test_util.h"

namespace tandem::server {
namespace {

class WebRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tokenizer_ = testing::MakeTestTokenizer();
    context_.backend = &backend_;
    context_.tokenizer = tokenizer_.get();
    context_.limits.n_ctx = 256;
    context_.model_id = "tiny.gguf";
  }

  HttpResponse Get(const std::string& path, const std::string& key = "") {
    ServerOptions options;
    options.api_keys = {"secret"};
    ServerApp app(options);
    app.SetReady(context_);
    HttpRequest r{"GET", path, {}, "", {}, ""};
    if (!key.empty()) r.headers["authorization"] = "Bearer " + key;
    return app.Handle(r);
  }

  static std::string Header(const HttpResponse& r, const std::string& name) {
    for (const auto& [k, v] : r.headers) {
      if (k == name) return v;
    }
    return "";
  }

  std::unique_ptr<Tokenizer> tokenizer_;
  testing::FakeBackend backend_;
  RouteContext context_;
};

TEST_F(WebRoutesTest, ThePageIsPublicAndLoadsOnlyItsOwnFiles) {
  const HttpResponse page = Get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("<title>tandem chat</title>"), std::string::npos);
  EXPECT_NE(Header(page, "Content-Security-Policy").find("default-src 'none'"), std::string::npos);
  // Attached recordings play from data: URLs; nothing else is a media source.
  EXPECT_NE(Header(page, "Content-Security-Policy").find("media-src data:;"), std::string::npos);
  EXPECT_EQ(Header(page, "X-Content-Type-Options"), "nosniff");
  for (const char* name : {"app.js", "api.js", "markdown.js", "spec_panel.js", "audio.js",
                           "composer_media.js", "recorder.js", "recorder_worklet.js"}) {
    const HttpResponse js = Get(std::string("/web/") + name);
    EXPECT_EQ(js.status, 200) << name;
    EXPECT_EQ(js.content_type, "text/javascript; charset=utf-8") << name;
    EXPECT_FALSE(js.body.empty()) << name;
  }
  EXPECT_EQ(Get("/web/style.css").content_type, "text/css; charset=utf-8");
  // Anything that is not one of the page's files is guarded like every other route.
  EXPECT_EQ(Get("/web/missing.js").status, 401);
  EXPECT_EQ(Get("/web/missing.js", "secret").status, 404);
  EXPECT_EQ(Get("/web/").status, 401);
  EXPECT_EQ(Get("/web/../server_app.cpp", "secret").status, 404);
}

TEST_F(WebRoutesTest, PropsNeedsTheKeyAndSaysWhySpeculationIsInactive) {
  EXPECT_EQ(Get("/props").status, 401);
  EXPECT_EQ(Get("/props", "wrong").status, 401);

  Json props = Json::parse(Get("/props", "secret").body);
  EXPECT_EQ(props["model"], "tiny.gguf");
  EXPECT_TRUE(props["assistant"].is_null());
  EXPECT_EQ(props["total_slots"], 1);
  EXPECT_EQ(props["slots_busy"], 0);
  EXPECT_EQ(props["queue_depth"], 0);
  EXPECT_EQ(props["n_ctx"], 256);
  EXPECT_EQ(props["speculative"]["active"], false);
  EXPECT_NE(props["speculative"]["inactive_reason"].get<std::string>().find("no assistant"),
            std::string::npos);

  context_.assistant_id = "tiny-assistant.gguf";
  props = Json::parse(Get("/props", "secret").body);
  EXPECT_EQ(props["assistant"], "tiny-assistant.gguf");
  EXPECT_EQ(props["speculative"]["active"], false);
  EXPECT_NE(props["speculative"]["inactive_reason"].get<std::string>().find("--spec-type none"),
            std::string::npos);

  context_.limits.spec.type = SpecType::kMtp;
  context_.limits.spec.draft_max = 6;
  props = Json::parse(Get("/props", "secret").body);
  EXPECT_EQ(props["speculative"]["active"], true);
  EXPECT_TRUE(props["speculative"]["inactive_reason"].is_null());
  EXPECT_EQ(props["speculative"]["type"], "mtp");
  EXPECT_EQ(props["speculative"]["draft_max"], 6);

  context_.limits.spec.draft_max = 0;
  props = Json::parse(Get("/props", "secret").body);
  EXPECT_EQ(props["speculative"]["active"], false);
  EXPECT_NE(props["speculative"]["inactive_reason"].get<std::string>().find("--draft-max 0"),
            std::string::npos);
}

}  // namespace
}  // namespace tandem::server
