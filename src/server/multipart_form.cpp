// multipart/form-data: the boundary, then one pass over the body, part by part.
#include "server/multipart_form.h"

#include <algorithm>
#include <cstring>

#include "base/error.h"

namespace tandem::server {
namespace {

constexpr size_t kMaxBoundary = 70;  // RFC 2046
constexpr size_t kMaxEcho = 64;      // bytes of client text quoted in a message

bool IsSpace(char c) {
  return c == ' ' || c == '\t';
}

char Lower(char c) {
  return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// `s` quoted for a message, cut at kMaxEcho bytes.
std::string Echo(std::string_view s) {
  std::string out(1, '\'');
  out.append(s.substr(0, kMaxEcho));
  out.append(s.size() > kMaxEcho ? "...'" : "'");
  return out;
}

[[noreturn]] void Invalid(const std::string& message) {
  Fail(ErrorKind::kInvalidArgument, message);
}

struct Param {
  std::string name;  // lower case
  std::string value;
};

// The `; name=value` parameters of a header value, from `text` (what follows the value's first
// item). Values are tokens (up to ';' or a space) or quoted strings with backslash escapes.
std::vector<Param> ParseParams(std::string_view text, const std::string& where) {
  std::vector<Param> params;
  size_t i = 0;
  const auto skip_spaces = [&] {
    while (i < text.size() && IsSpace(text[i])) ++i;
  };
  for (;;) {
    skip_spaces();
    if (i == text.size()) return params;
    if (text[i] != ';') Invalid(where + ": expected ';' before " + Echo(text.substr(i)));
    ++i;
    skip_spaces();
    if (i == text.size()) return params;  // a trailing ';'
    const size_t name_start = i;
    while (i < text.size() && text[i] != '=' && text[i] != ';' && !IsSpace(text[i])) ++i;
    std::string name(text.substr(name_start, i - name_start));
    for (char& c : name) c = Lower(c);
    if (name.empty()) Invalid(where + ": a parameter without a name");
    skip_spaces();
    if (i == text.size() || text[i] != '=')
      Invalid(where + ": parameter " + name + " has no value");
    ++i;
    skip_spaces();
    std::string value;
    if (i < text.size() && text[i] == '"') {
      ++i;
      bool closed = false;
      while (i < text.size()) {
        char c = text[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < text.size()) c = text[i++];
        value += c;
      }
      if (!closed) Invalid(where + ": the quoted value of parameter " + name + " does not end");
    } else {
      const size_t start = i;
      while (i < text.size() && text[i] != ';' && !IsSpace(text[i])) ++i;
      value = std::string(text.substr(start, i - start));
      if (value.empty()) Invalid(where + ": parameter " + name + " has no value");
    }
    params.push_back({std::move(name), std::move(value)});
  }
}

bool IsBoundaryChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("'()+_,-./:=? ", c) != nullptr && c != '\0';
}

// The position of `needle` in `haystack` at or after `from`, or npos. glibc's memmem is linear
// in the haystack whatever the bytes (it falls back to two-way search).
size_t Find(std::string_view haystack, std::string_view needle, size_t from) {
  if (from > haystack.size()) return std::string_view::npos;
  const void* hit =
      memmem(haystack.data() + from, haystack.size() - from, needle.data(), needle.size());
  if (hit == nullptr) return std::string_view::npos;
  return size_t(static_cast<const char*>(hit) - haystack.data());
}

// Reads one part: its headers from `start` (just after its delimiter line) and its content up to
// the next delimiter. Returns the position of that delimiter's "--".
class PartReader {
 public:
  PartReader(std::string_view body, std::string_view delimiter, const MultipartLimits& limits)
      : body_(body), delimiter_(delimiter), limits_(limits) {}

  size_t Read(size_t index, size_t start, FormField& field) {
    index_ = index;
    start_ = start;
    field.index = index;
    const size_t header_end = ReadHeaders(field);
    // The content: up to the CRLF that opens the next delimiter. RFC 2046's body-part is the
    // headers and an optional CRLF and content, so the blank line's CRLF may itself open the
    // delimiter: no content.
    const size_t next = Find(body_, delimiter_, header_end - 2);
    if (next == std::string_view::npos) {
      Bad("the body ends inside this part (no delimiter after its content, and no closing "
          "delimiter)");
    }
    field.offset = std::min(header_end, next);
    field.bytes = body_.substr(field.offset, next - field.offset);
    return next + 2;
  }

 private:
  [[noreturn]] void Bad(const std::string& what) const {
    Invalid("multipart/form-data part " + std::to_string(index_) + " at byte " +
            std::to_string(start_) + ": " + what);
  }

  // Reads the header lines; returns where the content starts (after the blank line).
  size_t ReadHeaders(FormField& field) {
    const size_t limit_end = std::min(body_.size(), start_ + limits_.max_header_bytes);
    bool have_disposition = false, have_type = false;
    size_t line = start_;
    for (;;) {
      const size_t eol = Find(body_.substr(0, limit_end), "\r\n", line);
      if (eol == std::string_view::npos) {
        if (limit_end == body_.size()) Bad("the body ends inside the part's headers");
        Bad("headers longer than " + std::to_string(limits_.max_header_bytes) + " bytes");
      }
      if (eol == line) break;  // the blank line
      ReadHeaderLine(body_.substr(line, eol - line), line, field, have_disposition, have_type);
      line = eol + 2;
    }
    if (!have_disposition) Bad("no Content-Disposition header");
    return line + 2;
  }

  void ReadHeaderLine(std::string_view text, size_t at, FormField& field, bool& have_disposition,
                      bool& have_type) {
    const std::string where = "header line at byte " + std::to_string(at);
    if (IsSpace(text.front())) Bad(where + ": folded header lines are not supported");
    for (char c : text) {
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) {
        Bad(where + ": a control character (bare CR or LF line endings are not accepted)");
      }
    }
    const size_t colon = text.find(':');
    if (colon == std::string_view::npos) Bad(where + ": no ':' in " + Echo(text));
    const std::string_view name = text.substr(0, colon);
    const std::string_view value = Trim(text.substr(colon + 1));
    if (name.empty() || IsSpace(name.back())) Bad(where + ": a malformed header name");
    if (EqualsIgnoreCase(name, "content-disposition")) {
      if (have_disposition) Bad("Content-Disposition given twice");
      have_disposition = true;
      ReadDisposition(value, field);
    } else if (EqualsIgnoreCase(name, "content-type")) {
      if (have_type) Bad("Content-Type given twice");
      have_type = true;
      field.content_type = std::string(value);
    } else if (EqualsIgnoreCase(name, "content-transfer-encoding")) {
      if (!EqualsIgnoreCase(value, "binary") && !EqualsIgnoreCase(value, "8bit") &&
          !EqualsIgnoreCase(value, "7bit")) {
        Bad("Content-Transfer-Encoding " + Echo(value) +
            " is not supported (RFC 7578: parts are sent as binary)");
      }
    }
  }

  void ReadDisposition(std::string_view value, FormField& field) {
    const size_t semi = value.find(';');
    const std::string_view type = Trim(value.substr(0, semi));
    if (!EqualsIgnoreCase(type, "form-data")) {
      Bad("Content-Disposition " + Echo(type) + ", expected form-data");
    }
    const std::vector<Param> params =
        ParseParams(semi == std::string_view::npos ? std::string_view() : value.substr(semi),
                    "multipart/form-data part " + std::to_string(index_) + " at byte " +
                        std::to_string(start_) + ": Content-Disposition");
    bool have_name = false;
    for (const Param& p : params) {
      if (p.name == "name") {
        if (have_name) Bad("Content-Disposition has two name parameters");
        have_name = true;
        field.name = p.value;
      } else if (p.name == "filename") {
        if (field.filename) Bad("Content-Disposition has two filename parameters");
        field.filename = p.value;
      }
    }
    if (!have_name) Bad("Content-Disposition has no name parameter");
    if (field.name.empty()) Bad("an empty field name");
    if (field.name.size() > limits_.max_name_bytes) {
      Bad("a field name longer than " + std::to_string(limits_.max_name_bytes) + " bytes");
    }
  }

  std::string_view body_;
  std::string_view delimiter_;
  const MultipartLimits& limits_;
  size_t index_ = 0;
  size_t start_ = 0;
};

}  // namespace

std::string MultipartBoundary(std::string_view content_type) {
  if (Trim(content_type).empty()) {
    Invalid("the request has no Content-Type header; expected multipart/form-data");
  }
  const size_t semi = content_type.find(';');
  const std::string_view type = Trim(content_type.substr(0, semi));
  if (!EqualsIgnoreCase(type, "multipart/form-data")) {
    Invalid("Content-Type " + Echo(type) + ": expected multipart/form-data");
  }
  const std::vector<Param> params =
      ParseParams(semi == std::string_view::npos ? std::string_view() : content_type.substr(semi),
                  "Content-Type");
  std::optional<std::string> boundary;
  for (const Param& p : params) {
    if (p.name != "boundary") continue;
    if (boundary) Invalid("Content-Type: the boundary parameter is given twice");
    boundary = p.value;
  }
  if (!boundary) Invalid("Content-Type: multipart/form-data without a boundary parameter");
  if (boundary->empty() || boundary->size() > kMaxBoundary) {
    Invalid("Content-Type: a boundary of " + std::to_string(boundary->size()) +
            " characters (RFC 2046: 1 to 70)");
  }
  for (char c : *boundary) {
    if (!IsBoundaryChar(c)) {
      Invalid("Content-Type: the boundary " + Echo(*boundary) +
              " has a character RFC 2046 does not allow");
    }
  }
  if (boundary->back() == ' ') Invalid("Content-Type: the boundary ends with a space");
  return *boundary;
}

std::vector<FormField> ParseMultipartForm(std::string_view content_type, std::string_view body,
                                          const MultipartLimits& limits) {
  const std::string boundary = MultipartBoundary(content_type);
  if (body.size() > limits.max_body_bytes) {
    Invalid("multipart/form-data body of " + std::to_string(body.size()) + " bytes (the limit is " +
            std::to_string(limits.max_body_bytes) + ")");
  }
  const std::string delimiter = "\r\n--" + boundary;
  const std::string_view dash_boundary = std::string_view(delimiter).substr(2);

  // The first delimiter opens the body or follows the preamble's last CRLF.
  size_t pos = 0;
  if (body.substr(0, dash_boundary.size()) != dash_boundary) {
    pos = Find(body, delimiter, 0);
    if (pos == std::string_view::npos) {
      Invalid("multipart/form-data body: no delimiter --" + boundary +
              " (a body with CRLF line endings and the Content-Type's boundary)");
    }
    pos += 2;
  }

  std::vector<FormField> fields;
  PartReader reader(body, delimiter, limits);
  for (;;) {
    // `pos` is at the "--" of a delimiter line.
    size_t i = pos + dash_boundary.size();
    const std::string where = "multipart/form-data delimiter at byte " + std::to_string(pos);
    if (body.substr(i, 2) == "--") return fields;  // the close delimiter; the epilogue is ignored
    while (i < body.size() && IsSpace(body[i])) ++i;
    if (i == body.size()) {
      Invalid(where + ": the body ends without the closing delimiter --" + boundary + "--");
    }
    if (body.substr(i, 2) != "\r\n") {
      if (body[i] == '\n') Invalid(where + ": a bare LF; lines must end in CRLF");
      Invalid(where + ": followed by " + Echo(body.substr(i, 16)) +
              ", expected CRLF or -- (is the boundary a prefix of another?)");
    }
    if (fields.size() == limits.max_parts) {
      Invalid("multipart/form-data body: more than " + std::to_string(limits.max_parts) +
              " parts (part " + std::to_string(fields.size()) + " at byte " +
              std::to_string(i + 2) + ")");
    }
    FormField field;
    pos = reader.Read(fields.size(), i + 2, field);
    fields.push_back(std::move(field));
  }
}

}  // namespace tandem::server
