#include "media/data_url.h"

#include "base/error.h"
#include "media/base64.h"

namespace tandem {
namespace {

char Lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// RFC 2045 token characters: visible ASCII except tspecials.
bool IsTokenChar(char c) {
  if (c <= 0x20 || c >= 0x7f) return false;
  return std::string_view("()<>@,;:\\\"/[]?=").find(c) == std::string_view::npos;
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsTokenChar(c)) return false;
  }
  return true;
}

}  // namespace

bool IsDataUrl(std::string_view url) {
  return url.size() >= 5 && EqualsIgnoringCase(url.substr(0, 5), "data:");
}

DataUrl ParseDataUrl(std::string_view url, size_t max_decoded_bytes) {
  if (!IsDataUrl(url)) Fail(ErrorKind::kInvalidArgument, "data URL: does not start with data:");
  size_t comma = url.find(',');
  if (comma == std::string_view::npos) {
    Fail(ErrorKind::kInvalidArgument, "data URL: no ',' before the payload");
  }
  std::string_view header = url.substr(5, comma - 5);
  std::string_view payload = url.substr(comma + 1);

  size_t last_semicolon = header.rfind(';');
  if (last_semicolon == std::string_view::npos ||
      !EqualsIgnoringCase(header.substr(last_semicolon + 1), "base64")) {
    Fail(ErrorKind::kUnsupported, "data URL: the payload is not base64 (';base64,' expected)");
  }
  std::string_view type = header.substr(0, header.find(';'));
  size_t slash = type.find('/');
  if (type.empty()) Fail(ErrorKind::kInvalidArgument, "data URL: no media type");
  if (slash == std::string_view::npos || !IsToken(type.substr(0, slash)) ||
      !IsToken(type.substr(slash + 1))) {
    Fail(ErrorKind::kInvalidArgument,
         "data URL: malformed media type '" + std::string(type.substr(0, 64)) + "'");
  }

  DataUrl result;
  result.mime.reserve(type.size());
  for (char c : type) result.mime.push_back(Lower(c));
  try {
    result.bytes = DecodeBase64(payload, max_decoded_bytes);
  } catch (const Error& e) {
    Fail(e.kind(), std::string("data URL: payload: ") + e.what());
  }
  return result;
}

}  // namespace tandem
