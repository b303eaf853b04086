// Strict base64 (RFC 4648 section 4, the standard alphabet A-Z a-z 0-9 + /) for media payloads.
// Strict means: no whitespace or line breaks, no URL-safe '-' '_', '=' padding either complete
// or absent (both "QQ==" and "QQ" are accepted), nothing after the padding, a length that is
// not 1 more than a multiple of 4, and zero bits where the last character has bits to spare (so
// one byte string has exactly one accepted text). Every refusal names the offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace tandem {

// The number of bytes `text` decodes to, from its length and padding alone (the characters are
// not checked). Throws Error(kInvalidArgument) for an impossible length or misplaced padding.
size_t Base64DecodedSize(std::string_view text);

// Decodes `text`. The decoded size is checked against `max_decoded_bytes` before anything is
// allocated or decoded; then a bad character is reported (with its offset) before a bad
// length or padding, the likelier cause of both (a line break, say). Throws
// Error(kInvalidArgument).
std::vector<uint8_t> DecodeBase64(std::string_view text, size_t max_decoded_bytes);

}  // namespace tandem
