// The server's request handling, independent of the HTTP library: route table, API-key check,
// body limit, loading / shutdown states, and errors turned into OpenAI- or Anthropic-shaped
// bodies. The HTTP layer (http_server.h) only moves bytes in and out.
#pragma once

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/http_types.h"
#include "server/metrics.h"
#include "server/route_context.h"

namespace tandem::server {

struct ServerOptions {
  std::vector<std::string> api_keys;  // empty: no authentication
  size_t max_body_bytes = 8u << 20;   // larger bodies get 413
  // Origins browsers may call from (--cors-origin; "*" for any). Empty: no CORS headers, and
  // preflights are not answered.
  std::vector<std::string> cors_origins;
  // Non-empty (a loopback binding): a request whose Host header names another host gets 403, so
  // a web page cannot reach the server through DNS rebinding. Ports are ignored.
  std::vector<std::string> allowed_hosts;
};

// The host part of a Host header value ("[::1]:8080" -> "::1", "a.b:80" -> "a.b"), lower case.
std::string HostOfHeader(std::string_view host);

class ServerApp {
 public:
  explicit ServerApp(ServerOptions options);
  ServerApp(const ServerApp&) = delete;
  ServerApp& operator=(const ServerApp&) = delete;

  // Until this is called every endpoint answers 503 "loading model". The context's backend and
  // tokenizer must outlive every request handled after it. Call once.
  void SetReady(RouteContext context);
  // From now on /health and the generating endpoints answer 503 (in-flight requests go on).
  void BeginShutdown();

  // Answers one request. Thread-safe; never throws. Every endpoint but /health needs the API key
  // (Authorization: Bearer KEY or x-api-key: KEY) when keys are configured.
  HttpResponse Handle(const HttpRequest& request);

  // Counts a response actually sent, including those the HTTP layer answers itself (413 before
  // the body is read). Thread-safe.
  void CountResponse(int status) { counters_.Count(status); }

  // The error response for `status` in the shape the path's API uses.
  static HttpResponse ErrorResponse(const std::string& path, int status,
                                    const std::string& message);
  size_t max_body_bytes() const { return options_.max_body_bytes; }

 private:
  enum class State { kLoading, kReady, kStopping };
  using Handler = HttpResponse (*)(const RouteContext&, const HttpRequest&);

  HttpResponse Route(const HttpRequest& request);
  HttpResponse Dispatch(const HttpRequest& request);
  // The origin to allow for this request's Origin header, or "".
  std::string AllowedOrigin(const HttpRequest& request) const;
  HttpResponse Health() const;
  HttpResponse Metrics() const;
  bool Authorized(const HttpRequest& request) const;

  const ServerOptions options_;
  std::atomic<State> state_{State::kLoading};
  RouteContext context_;  // written once by SetReady before state_ becomes kReady
  ResponseCounters counters_;
};

}  // namespace tandem::server
