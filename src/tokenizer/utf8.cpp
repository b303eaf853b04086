// UTF-8 helpers for the tokenizer: well-formed sequence lengths, boundaries and sanitising.
#include "tokenizer/utf8.h"

#include <cstdint>

namespace tandem {
namespace {

// An inclusive range of byte values.
struct ByteRange {
  uint8_t lo;
  uint8_t hi;
};

// Total length of the sequence a lead byte announces, or 0 for bytes that cannot lead one.
size_t LeadLength(uint8_t b) {
  if (b < 0x80) return 1;
  if (b >= 0xC2 && b <= 0xDF) return 2;
  if (b >= 0xE0 && b <= 0xEF) return 3;
  if (b >= 0xF0 && b <= 0xF4) return 4;
  return 0;
}

// Bytes allowed right after lead byte `lead` (Unicode Table 3-7).
ByteRange SecondByteRange(uint8_t lead) {
  switch (lead) {
    case 0xE0:
      return {0xA0, 0xBF};  // no overlong 3-byte forms
    case 0xED:
      return {0x80, 0x9F};  // no surrogates
    case 0xF0:
      return {0x90, 0xBF};  // no overlong 4-byte forms
    case 0xF4:
      return {0x80, 0x8F};  // nothing above U+10FFFF
    default:
      return {0x80, 0xBF};
  }
}

bool IsContinuation(uint8_t b) {
  return (b & 0xC0) == 0x80;
}

// Number of bytes from text[pos] that are consistent with a well-formed sequence so far (the
// whole sequence if complete), and the sequence's full length (0 if the lead byte is invalid).
void ScanSequence(std::string_view text, size_t pos, size_t* matched, size_t* full) {
  const auto lead = static_cast<uint8_t>(text[pos]);
  *full = LeadLength(lead);
  *matched = *full == 0 ? 0 : 1;
  for (size_t k = 1; k < *full && pos + k < text.size(); ++k) {
    const auto b = static_cast<uint8_t>(text[pos + k]);
    if (k == 1) {
      const ByteRange r = SecondByteRange(lead);
      if (b < r.lo || b > r.hi) return;
    } else if (!IsContinuation(b)) {
      return;
    }
    *matched = k + 1;
  }
}

}  // namespace

size_t Utf8SequenceLength(std::string_view text, size_t pos) {
  size_t matched = 0;
  size_t full = 0;
  ScanSequence(text, pos, &matched, &full);
  return full != 0 && matched == full ? full : 0;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = Utf8SequenceLength(text, pos);
    if (len == 0) return false;
    pos += len;
  }
  return true;
}

size_t Utf8CompletePrefixLength(std::string_view text) {
  // A held-back tail is at most 3 bytes: look for a lead byte among the last 3 positions.
  const size_t first = text.size() > 3 ? text.size() - 3 : 0;
  for (size_t pos = first; pos < text.size(); ++pos) {
    size_t matched = 0;
    size_t full = 0;
    ScanSequence(text, pos, &matched, &full);
    // Incomplete but still completable: everything from here to the end matched and is short.
    if (full > 1 && matched == text.size() - pos && matched < full) return pos;
  }
  return text.size();
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = Utf8SequenceLength(text, pos);
    if (len == 0) {
      AppendUtf8(0xFFFD, out);
      ++pos;
    } else {
      out.append(text.substr(pos, len));
      pos += len;
    }
  }
  return out;
}

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace tandem
