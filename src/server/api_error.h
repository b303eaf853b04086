// HTTP-level failures and their JSON bodies in the OpenAI and Anthropic error shapes.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/error.h"

namespace tandem::server {

// Which API's error shape a response uses (chosen from the request path).
enum class ApiFlavor { kOpenAi, kAnthropic };

// The error shape of requests to `path`: Anthropic's under /v1/messages, OpenAI's elsewhere.
ApiFlavor FlavorForPath(std::string_view path);

// A request that fails with a given HTTP status. Thrown by handlers; the router turns it into a
// response. `retry_after_seconds` > 0 adds a Retry-After header (503 queue full).
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message, int retry_after_seconds = 0)
      : std::runtime_error(message), status_(status), retry_after_(retry_after_seconds) {}
  int status() const { return status_; }
  int retry_after_seconds() const { return retry_after_; }

 private:
  int status_;
  int retry_after_;
};

// HTTP status for an Error raised while handling a request: kInvalidArgument, kCorrupt and
// kUnsupported are the client's fault (400), kNotFound is 404, kUnavailable 503, the rest 500.
int HttpStatusForError(ErrorKind kind);

// OpenAI: {"error": {"message", "type", "param": null, "code"}} with type invalid_request_error
// (4xx), authentication_error (401), not_found_error (404), unavailable_error (503),
// server_error (5xx); code is the HTTP status.
// Anthropic: {"type": "error", "error": {"type", "message"}} with type invalid_request_error,
// authentication_error, not_found_error, request_too_large (413), overloaded_error (503),
// api_error (5xx).
nlohmann::json ErrorBody(ApiFlavor flavor, int status, const std::string& message);

// The error type string ErrorBody uses for `status`.
const char* ErrorTypeName(ApiFlavor flavor, int status);

}  // namespace tandem::server
