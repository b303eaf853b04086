// Routing, authentication, limits and error mapping.
#include "server/server_app.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "base/error.h"
#include "base/log.h"
#include "server/routes.h"

namespace tandem::server {
namespace {

struct RouteEntry {
  const char* method;
  const char* path;
  HttpResponse (*handler)(const RouteContext&, const HttpRequest&);
  bool generates;       // refused while shutting down
  bool prefix = false;  // `path` is a prefix (the rest is a path parameter)
};

// /health and /metrics are handled before the table.
constexpr RouteEntry kRoutes[] = {
    {"POST", "/v1/chat/completions", HandleChatCompletions, true},
    {"POST", "/chat/completions", HandleChatCompletions, true},
    {"POST", "/v1/completions", HandleCompletions, true},
    {"POST", "/completions", HandleCompletions, true},
    {"POST", "/completion", HandleCompletion, true},
    {"POST", "/v1/responses", HandleResponses, true},
    {"GET", "/v1/responses/", HandleGetResponse, false, true},
    {"DELETE", "/v1/responses/", HandleDeleteResponse, false, true},
    {"POST", "/v1/messages", HandleMessages, true},
    {"POST", "/v1/audio/transcriptions", HandleTranscriptions, true},
    {"POST", "/v1/audio/translations", HandleTranslations, true},
    {"POST", "/v1/messages/count_tokens", HandleCountTokens, false},
    {"GET", "/v1/models", HandleModels, false},
    {"GET", "/models", HandleModels, false},
    {"POST", "/tokenize", HandleTokenize, false},
    {"POST", "/detokenize", HandleDetokenize, false},
    {"GET", "/props", HandleProps, false},
    {"GET", "/slots", HandleSlots, false},
    {"POST", "/slots/", HandleSlotAction, false, true},
};

bool IsHealth(std::string_view path) {
  return path == "/health" || path == "/v1/health";
}

// Compares without an early exit, so timing does not reveal how much of a key matched.
bool SameKey(std::string_view a, std::string_view b) {
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < a.size(); ++i) diff |= unsigned(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

}  // namespace

ServerApp::ServerApp(ServerOptions options) : options_(std::move(options)) {}

void ServerApp::SetReady(RouteContext context) {
  context_ = std::move(context);
  state_.store(State::kReady);
}

void ServerApp::BeginShutdown() {
  state_.store(State::kStopping);
}

HttpResponse ServerApp::ErrorResponse(const std::string& path, int status,
                                      const std::string& message) {
  return JsonResponse(status, ErrorBody(FlavorForPath(path), status, message));
}

bool ServerApp::Authorized(const HttpRequest& request) const {
  if (options_.api_keys.empty()) return true;
  const std::string key = PresentedApiKey(request);
  bool ok = false;
  for (const std::string& k : options_.api_keys) ok |= !key.empty() && SameKey(k, key);
  return ok;
}

HttpResponse ServerApp::Health() const {
  switch (state_.load()) {
    case State::kLoading:
      return ErrorResponse("/health", 503, "Loading model");
    case State::kStopping:
      return ErrorResponse("/health", 503, "Shutting down");
    case State::kReady:
      break;
  }
  return JsonResponse(200, {{"status", "ok"}});
}

HttpResponse ServerApp::Metrics() const {
  HttpResponse response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = PrometheusText(counters_.Snapshot(), context_.backend->Metrics());
  return response;
}

HttpResponse ServerApp::Route(const HttpRequest& request) {
  if (IsHealth(request.path)) return Health();
  if (request.method == "GET" && IsWebAsset(request.path)) return HandleWebAsset(request);
  if (!Authorized(request)) {
    return ErrorResponse(request.path, 401, "invalid or missing API key");
  }
  if (request.body.size() > options_.max_body_bytes) {
    return ErrorResponse(request.path, 413,
                         "the request body has " + std::to_string(request.body.size()) +
                             " bytes; the limit is " + std::to_string(options_.max_body_bytes));
  }
  const RouteEntry* route = nullptr;
  bool path_known = request.path == "/metrics";
  for (const RouteEntry& r : kRoutes) {
    if (r.prefix ? !request.path.starts_with(r.path) : request.path != r.path) continue;
    path_known = true;
    if (request.method == r.method) route = &r;
  }
  const bool metrics = request.path == "/metrics" && request.method == "GET";
  if (route == nullptr && !metrics) {
    if (path_known) {
      return ErrorResponse(request.path, 405,
                           "method " + request.method + " is not allowed on " + request.path);
    }
    return ErrorResponse(request.path, 404,
                         "unknown route: " + request.method + " " + request.path);
  }
  const State state = state_.load();
  if (state == State::kLoading) return ErrorResponse(request.path, 503, "Loading model");
  if (metrics) return Metrics();
  if (state == State::kStopping && route->generates) {
    return ErrorResponse(request.path, 503, "the server is shutting down");
  }
  return route->handler(context_, request);
}

std::string HostOfHeader(std::string_view host) {
  std::string h;
  if (!host.empty() && host[0] == '[') {
    const size_t close = host.find(']');
    h = std::string(host.substr(1, close == std::string_view::npos ? close : close - 1));
  } else {
    h = std::string(host.substr(0, host.find(':')));
  }
  for (char& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return h;
}

std::string ServerApp::AllowedOrigin(const HttpRequest& request) const {
  const std::string origin = request.Header("origin");
  if (origin.empty()) return {};
  for (const std::string& o : options_.cors_origins) {
    if (o == "*") return "*";
    if (o == origin) return origin;
  }
  return {};
}

HttpResponse ServerApp::Handle(const HttpRequest& request) {
  const std::string host = request.Header("host");
  if (!options_.allowed_hosts.empty() && !host.empty()) {
    const std::string name = HostOfHeader(host);
    const auto& allowed = options_.allowed_hosts;
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return ErrorResponse(request.path, 403,
                           "Host '" + host.substr(0, 100) +
                               "' is not this server's (it listens on loopback; start it with "
                               "--allow-host NAME to accept that name)");
    }
  }
  const std::string origin = AllowedOrigin(request);
  if (!origin.empty() && request.method == "OPTIONS" &&
      !request.Header("access-control-request-method").empty()) {
    HttpResponse preflight;
    preflight.status = 204;
    std::string headers = request.Header("access-control-request-headers");
    if (headers.empty()) headers = "authorization, content-type, x-api-key, x-request-id";
    preflight.headers = {{"Access-Control-Allow-Origin", origin},
                         {"Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS"},
                         {"Access-Control-Allow-Headers", headers},
                         {"Access-Control-Max-Age", "600"},
                         {"Vary", "Origin"}};
    return preflight;
  }
  HttpResponse response = Dispatch(request);
  if (!origin.empty()) {
    response.headers.emplace_back("Access-Control-Allow-Origin", origin);
    response.headers.emplace_back("Access-Control-Expose-Headers", "X-Request-Id, Retry-After");
    response.headers.emplace_back("Vary", "Origin");
  }
  return response;
}

HttpResponse ServerApp::Dispatch(const HttpRequest& request) {
  try {
    return Route(request);
  } catch (const HttpError& e) {
    HttpResponse r = ErrorResponse(request.path, e.status(), e.what());
    if (e.retry_after_seconds() > 0) {
      r.headers.emplace_back("Retry-After", std::to_string(e.retry_after_seconds()));
    }
    return r;
  } catch (const Error& e) {
    const int status = HttpStatusForError(e.kind());
    if (status >= 500) LogError(std::string("server: ") + e.what());
    return ErrorResponse(request.path, status, e.what());
  } catch (const nlohmann::json::exception& e) {
    return ErrorResponse(request.path, 400, std::string("bad JSON value: ") + e.what());
  } catch (const std::exception& e) {
    LogError(std::string("server: ") + e.what());
    return ErrorResponse(request.path, 500, std::string("internal error: ") + e.what());
  } catch (...) {
    return ErrorResponse(request.path, 500, "internal error");
  }
}

}  // namespace tandem::server
