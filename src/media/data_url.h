// RFC 2397 data URLs as API clients send images: data:<type>/<subtype>[;param=value]...;base64,
// <payload>. Only base64 payloads are accepted (a binary image in percent-encoding is not what
// any client sends); the payload is strict base64 (base64.h: no whitespace). The scheme and the
// ";base64" marker are matched case-insensitively; the media type is returned in lower case,
// without its parameters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tandem {

struct DataUrl {
  std::string mime;            // "image/png"
  std::vector<uint8_t> bytes;  // the decoded payload
};

// True when `url` starts with "data:" (any case): the caller's test for "inline, not remote".
bool IsDataUrl(std::string_view url);

// Parses and decodes. The decoded size is checked against `max_decoded_bytes` before decoding.
// Throws Error(kInvalidArgument) "data URL: ..." for a missing comma, a missing or malformed
// media type, a bad payload (with the offset inside the payload) or a size over the limit, and
// Error(kUnsupported) for a payload that is not base64.
DataUrl ParseDataUrl(std::string_view url, size_t max_decoded_bytes);

}  // namespace tandem
