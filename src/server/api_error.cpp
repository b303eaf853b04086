// Error bodies in the shapes the OpenAI and Anthropic SDKs parse.
#include "server/api_error.h"

namespace tandem::server {

ApiFlavor FlavorForPath(std::string_view path) {
  return path.rfind("/v1/messages", 0) == 0 ? ApiFlavor::kAnthropic : ApiFlavor::kOpenAi;
}

int HttpStatusForError(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kInvalidArgument:
    case ErrorKind::kCorrupt:
    case ErrorKind::kUnsupported:
      return 400;
    case ErrorKind::kNotFound:
      return 404;
    case ErrorKind::kUnavailable:
      return 503;
    case ErrorKind::kIo:
    case ErrorKind::kInternal:
      break;
  }
  return 500;
}

const char* ErrorTypeName(ApiFlavor flavor, int status) {
  const bool anthropic = flavor == ApiFlavor::kAnthropic;
  switch (status) {
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return anthropic ? "request_too_large" : "invalid_request_error";
    case 429:
      return "rate_limit_error";
    case 503:
      return anthropic ? "overloaded_error" : "unavailable_error";
    default:
      break;
  }
  if (status >= 500) return anthropic ? "api_error" : "server_error";
  return "invalid_request_error";
}

nlohmann::json ErrorBody(ApiFlavor flavor, int status, const std::string& message) {
  const char* type = ErrorTypeName(flavor, status);
  if (flavor == ApiFlavor::kAnthropic) {
    return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
  }
  return {{"error", {{"message", message}, {"type", type}, {"param", nullptr}, {"code", status}}}};
}

}  // namespace tandem::server
