// The chat page and the server state it shows: GET / (index.html) and GET /web/NAME (the page's
// other files), both embedded at build time from src/server/web/; GET /props (llama-server's
// name): model, assistant, speculation, slots and queue as JSON.
#include <string>

#include "server/api_error.h"
#include "server/routes.h"
#include "server/web_assets.h"

namespace tandem::server {
namespace {

// The page loads only its own files (its recording worklet is a script) and talks only to this
// server; attached images and recordings are shown and played from data: URLs.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; media-src data:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'";

const WebAsset* FindAsset(std::string_view path) {
  std::string_view name;
  if (path == "/") {
    name = "index.html";
  } else if (path.rfind("/web/", 0) == 0) {
    name = path.substr(5);
  } else {
    return nullptr;
  }
  for (size_t i = 0; i < kWebAssetCount; ++i) {
    if (name == kWebAssets[i].name) return &kWebAssets[i];
  }
  return nullptr;
}

// Why requests do not draft by default, or null when they do.
Json InactiveReason(const RouteContext& context) {
  const SpecOptions& spec = context.limits.spec;
  if (context.assistant_id.empty()) return "no assistant loaded (start the server with -md FILE)";
  if (spec.type == SpecType::kNone) {
    return "the assistant is loaded but the server was started with --spec-type none";
  }
  if (spec.draft_max == 0) return "the server was started with --draft-max 0";
  return nullptr;
}

}  // namespace

bool IsWebAsset(std::string_view path) {
  return FindAsset(path) != nullptr;
}

HttpResponse HandleWebAsset(const HttpRequest& request) {
  const WebAsset* asset = FindAsset(request.path);
  if (asset == nullptr) {
    return JsonResponse(
        404, ErrorBody(ApiFlavor::kOpenAi, 404, "no page at " + request.path.substr(0, 200)));
  }
  HttpResponse response;
  response.content_type = asset->content_type;
  response.body = std::string(asset->body);
  response.headers = {{"Content-Security-Policy", kContentSecurityPolicy},
                      {"X-Content-Type-Options", "nosniff"},
                      {"Referrer-Policy", "no-referrer"},
                      {"Cache-Control", "no-cache"}};
  return response;
}

HttpResponse HandleProps(const RouteContext& context, const HttpRequest&) {
  const EngineMetrics m = context.backend->Metrics();
  const SpecOptions& spec = context.limits.spec;
  const SamplingParams& s = context.default_sampling;
  const Json reason = InactiveReason(context);
  return JsonResponse(
      200,
      {{"model", context.model_id},
       {"assistant", context.assistant_id.empty() ? Json() : Json(context.assistant_id)},
       {"n_ctx", context.limits.n_ctx},
       {"modalities", {{"vision", context.images != nullptr}, {"audio", context.audio != nullptr}}},
       {"total_slots", m.n_slots},
       {"slots_busy", m.busy_slots},
       {"queue_depth", m.queue_depth},
       {"speculative",
        {{"type", SpecTypeName(spec.type)},
         {"active", reason.is_null()},
         {"inactive_reason", reason},
         {"draft_max", spec.draft_max},
         {"draft_min", spec.draft_min},
         {"adaptive", spec.adaptive}}},
       {"default_generation_settings",
        {{"temperature", s.temperature},
         {"top_p", s.top_p},
         {"top_k", s.top_k},
         {"min_p", s.min_p},
         {"n_predict", context.limits.default_n_predict}}}});
}

}  // namespace tandem::server
