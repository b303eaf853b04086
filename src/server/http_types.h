// The HTTP exchange as the routes see it, independent of the HTTP library: a request with its
// body read, and a response that is either a whole body or a stream of chunks.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tandem::server {

struct HttpRequest {
  std::string method;                          // "GET", "POST", ...
  std::string path;                            // without the query string
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  // True once the client has closed its connection (polled by handlers that wait, so an
  // abandoned request is cancelled). Unset in tests: never gone.
  std::function<bool()> client_gone;
  std::string query;  // after '?', undecoded ("" when none)

  // The header's value, or "" (`name` in lower case).
  std::string Header(std::string_view name) const {
    auto it = headers.find(std::string(name));
    return it == headers.end() ? std::string() : it->second;
  }
};

// The API key the request presents: Authorization: Bearer KEY, else x-api-key, else "". What
// --api-key checks, and the request's tenant for suffix drafting (GenerateParams::tenant).
inline std::string PresentedApiKey(const HttpRequest& request) {
  const std::string auth = request.Header("authorization");
  if (auth.rfind("Bearer ", 0) == 0) return auth.substr(7);
  return request.Header("x-api-key");
}

// Sends one chunk of a streamed body; returns false once the client has gone.
using ChunkWriter = std::function<bool(std::string_view chunk)>;
// Called again and again on the connection's thread; writes what is ready (it may wait a little
// first) and returns true while more will come, false when the body is complete or a write
// failed. Owning everything it needs, it cleans up (cancels generation) when destroyed.
using BodyStreamer = std::function<bool(const ChunkWriter& write)>;

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  BodyStreamer stream;  // set: a chunked streamed body; `body` is ignored
  // For the access log, called once the body is sent: tokens generated (unset: none).
  std::function<int()> tokens;
};

}  // namespace tandem::server
