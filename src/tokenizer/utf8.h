// UTF-8 helpers for the tokenizer: well-formed sequence lengths, boundaries and sanitising.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tandem {

// Length (1-4) of the well-formed UTF-8 sequence starting at text[pos], or 0 if the bytes there do
// not start one (stray continuation byte, overlong form, surrogate, > U+10FFFF, truncated
// sequence). Well-formed is Unicode's Table 3-7. Requires pos < text.size().
size_t Utf8SequenceLength(std::string_view text, size_t pos);

// True if every byte of `text` belongs to a well-formed sequence.
bool IsValidUtf8(std::string_view text);

// Length of the longest prefix of `text` that does not end inside a sequence that may still be
// completed by more bytes: the bytes after it (at most 3) are a proper prefix of a well-formed
// sequence. Bytes that can never become well-formed count as complete (they are not held back).
size_t Utf8CompletePrefixLength(std::string_view text);

// `text` with every byte that is not part of a well-formed sequence replaced by U+FFFD.
std::string SanitizeUtf8(std::string_view text);

// UTF-8 encoding of code point `cp` (<= 0x10FFFF, not a surrogate); appends to `out`.
void AppendUtf8(char32_t cp, std::string& out);

}  // namespace tandem
