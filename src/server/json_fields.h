// Typed reads of request JSON: every wrong type or out-of-range value becomes
// Error(kInvalidArgument) naming the field, so handlers parse at the edge in one pass.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tandem::server {

using Json = nlohmann::ordered_json;

// Parses a request body within the server's JSON limits (json_limits.h). Throws
// Error(kInvalidArgument) for malformed JSON (naming the byte offset), a value beyond a limit
// (naming its path) and a top-level value that is not an object.
Json ParseJsonObject(std::string_view body);

// Compact JSON text; invalid UTF-8 in strings is replaced by U+FFFD instead of throwing.
std::string JsonText(const Json& value);

// "string", "number", "object", ... as JSON calls the type of `value`.
const char* JsonTypeName(const Json& value);

// The member `name` of `object`, or nullptr when absent or null. `object` must be an object.
const Json* FindField(const Json& object, std::string_view name);

// Optional members with type checks; `where` prefixes messages (e.g. "messages[1].content").
// Integers must be integral JSON numbers within [min, max].
std::optional<std::string> OptionalString(const Json& object, std::string_view name,
                                          std::string_view where = {});
std::optional<bool> OptionalBool(const Json& object, std::string_view name,
                                 std::string_view where = {});
std::optional<double> OptionalNumber(const Json& object, std::string_view name, double min,
                                     double max, std::string_view where = {});
std::optional<int64_t> OptionalInteger(const Json& object, std::string_view name, int64_t min,
                                       int64_t max, std::string_view where = {});

// The same for required members: absent or null fails with "NAME is required".
const Json& RequiredField(const Json& object, std::string_view name, std::string_view where = {});
std::string RequiredString(const Json& object, std::string_view name, std::string_view where = {});

// A token id's integer (its range is the caller's to check); anything but an integer fails with
// "WHERE: expected a token id, got TYPE".
int64_t TokenIdValue(const Json& value, std::string_view where);

// Fails unless `value` has JSON type `type` ("object", "array", "string"); `name` names it.
void ExpectType(const Json& value, std::string_view type, std::string_view name);

// The member names one reader of a JSON object takes.
using FieldNames = std::span<const std::string_view>;

// A member tandem accepts without acting on it: only a value that changes nothing passes
// (`changes_nothing`; null always passes); another is a 400 "PATH: WHY". A client's default
// (OpenAI's `user`, `n: 1`) is accepted so, never a value that asks for something tandem does
// not do.
struct NoOpField {
  std::string_view name;
  bool (*changes_nothing)(const Json& value);
  std::string_view why;  // why another value is refused, what to send instead
};

// The one check of which members a request object may hold: every member of `object` must be
// named in `read` (the members its reader takes) or in `no_ops`, and a no-op must hold a value
// that changes nothing. Throws Error(kInvalidArgument) naming the member's path (FieldPath(where,
// name)): "PATH: unknown field (not supported by tandem)" or "PATH: WHY". A field tandem does not
// implement is refused, never ignored.
void CheckFields(const Json& object, std::initializer_list<FieldNames> read,
                 std::initializer_list<std::span<const NoOpField>> no_ops, std::string_view where);
// The same without no-ops.
void RejectUnknownFields(const Json& object, std::initializer_list<std::string_view> known,
                         std::string_view where);

// NoOpField::changes_nothing for a member whose any string value changes nothing.
bool IsString(const Json& value);

// "where.name" (or "name" when where is empty).
std::string FieldPath(std::string_view where, std::string_view name);
// "where[i]".
std::string ElementPath(std::string_view where, size_t i);

}  // namespace tandem::server
