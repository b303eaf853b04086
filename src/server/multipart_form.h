// multipart/form-data request bodies (RFC 7578 over the multipart syntax of RFC 2046), as
// OpenAI's audio routes receive them: the boundary from the Content-Type header, then the parts
// with their Content-Disposition names, filenames and media types, within limits.
//
// What is accepted, and why:
//  - CRLF line endings only. Every client seen (curl -F, Python's urllib3/requests, Node's
//    undici FormData and the openai npm package's own encoder) sends CRLF; accepting a bare LF
//    would let a file's "\n--boundary" end it early, so a bare LF is refused, saying so.
//  - A delimiter is CRLF "--" boundary anywhere (RFC 2046's note: the boundary need only appear
//    in its entirety after the CRLF); what follows it must be "--" (the end) or optional spaces
//    or tabs and CRLF, or the body is refused.
//    A part's content is optional (RFC 2046): the CRLF ending its headers may open the next
//    delimiter, as in "name=\"a\"\r\n\r\n--boundary", an empty value.
//  - The preamble before the first delimiter and the epilogue after the last are ignored.
//  - Part headers: Content-Disposition (required, "form-data" with a `name`, optional
//    `filename`), Content-Type (optional), Content-Transfer-Encoding (7bit, 8bit or binary only:
//    RFC 7578 forbids the others and tandem does not decode them); other headers are ignored.
//    Parameter values are tokens or quoted strings (backslash escapes undone). Percent escapes
//    are kept as sent: curl, urllib3 and undici all send `"` in a filename as %22 but leave a
//    literal "%22" as it is, so decoding would be a guess. `filename*` (RFC 5987, which
//    RFC 7578 forbids) is ignored. Folded header lines are refused.
//  - Fields may repeat (OpenAI's `timestamp_granularities[]` does); whether a repeat is allowed
//    is the caller's rule.
//  - A form with no parts ("--boundary--" alone) is a valid empty list.
// The search for each delimiter is one pass of memmem over the part's bytes (the whole parse is
// linear in the body), and nothing is read past the body.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tandem::server {

struct MultipartLimits {
  size_t max_body_bytes = 64u << 20;  // the whole body (the server's --body-limit is smaller)
  size_t max_parts = 64;
  size_t max_header_bytes = 8192;  // the header lines of one part, CRLFs included
  size_t max_name_bytes = 256;     // one field name
};

struct FormField {
  std::string name;
  std::optional<std::string> filename;  // set when the part had a filename parameter (may be "")
  std::string content_type;             // the part's Content-Type as sent; "" when it had none
  std::string_view bytes;               // the part's content: a view into the parsed body
  size_t index = 0;                     // of the part, from 0
  size_t offset = 0;                    // of the content in the body
};

// The boundary of a `multipart/form-data; boundary=...` Content-Type value (media type and
// parameter names case-insensitive, the value a token or a quoted string). Throws
// Error(kInvalidArgument) for another media type, and for a boundary that is missing, given
// twice, or not 1 to 70 of the characters RFC 2046 allows (letters, digits, '()+_,-./:=? and a
// space, not last).
std::string MultipartBoundary(std::string_view content_type);

// The parts of `body`, in order. The views in the result point into `body`, which must outlive
// them. Throws Error(kInvalidArgument) naming what is wrong and where (the part index and the
// byte offset): a bad Content-Type (above), a body over the limit, no delimiter, a delimiter
// followed by something else than "--" or CRLF, more parts than the limit, part headers that do
// not end within the limit, a header line without a colon, folded or with a control character,
// a missing or repeated Content-Disposition, a disposition other than form-data, no name, an
// empty or too long name, a repeated name or filename parameter, an unterminated quoted string,
// a Content-Transfer-Encoding other than 7bit, 8bit or binary, and a body that ends before the
// closing "--boundary--".
std::vector<FormField> ParseMultipartForm(std::string_view content_type, std::string_view body,
                                          const MultipartLimits& limits = {});

}  // namespace tandem::server
