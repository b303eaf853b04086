// Typed reads of request JSON with field-naming error messages.
#include "server/json_fields.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"
#include "server/json_limits.h"

namespace tandem::server {
namespace {

[[noreturn]] void WrongType(std::string_view path, std::string_view expected, const Json& got) {
  Fail(ErrorKind::kInvalidArgument,
       std::string(path) + ": expected " + std::string(expected) + ", got " + JsonTypeName(got));
}

std::string NumberText(double v) {
  Json j = v;
  return j.dump();
}

}  // namespace

Json ParseJsonObject(std::string_view body) {
  Json j = ParseBoundedJson(body, "the request body");
  if (!j.is_object()) WrongType("request body", "a JSON object", j);
  return j;
}

std::string JsonText(const Json& value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const char* JsonTypeName(const Json& value) {
  if (value.is_number()) return "number";
  return value.type_name();
}

bool IsString(const Json& value) {
  return value.is_string();
}

std::string FieldPath(std::string_view where, std::string_view name) {
  if (where.empty()) return std::string(name);
  return std::string(where) + "." + std::string(name);
}

std::string ElementPath(std::string_view where, size_t i) {
  return std::string(where) + "[" + std::to_string(i) + "]";
}

const Json* FindField(const Json& object, std::string_view name) {
  auto it = object.find(name);
  if (it == object.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::string> OptionalString(const Json& object, std::string_view name,
                                          std::string_view where) {
  const Json* v = FindField(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) WrongType(FieldPath(where, name), "a string", *v);
  return v->get<std::string>();
}

std::optional<bool> OptionalBool(const Json& object, std::string_view name,
                                 std::string_view where) {
  const Json* v = FindField(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) WrongType(FieldPath(where, name), "a boolean", *v);
  return v->get<bool>();
}

std::optional<double> OptionalNumber(const Json& object, std::string_view name, double min,
                                     double max, std::string_view where) {
  const Json* v = FindField(object, name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) WrongType(FieldPath(where, name), "a number", *v);
  const double d = v->get<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    Fail(ErrorKind::kInvalidArgument, FieldPath(where, name) + " = " + NumberText(d) +
                                          " is outside [" + NumberText(min) + ", " +
                                          NumberText(max) + "]");
  }
  return d;
}

std::optional<int64_t> OptionalInteger(const Json& object, std::string_view name, int64_t min,
                                       int64_t max, std::string_view where) {
  const Json* v = FindField(object, name);
  if (v == nullptr) return std::nullopt;
  int64_t n = 0;
  if (v->is_number_integer()) {
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      n = INT64_MAX;
    } else {
      n = v->get<int64_t>();
    }
  } else if (v->is_number_float() && std::nearbyint(v->get<double>()) == v->get<double>() &&
             std::fabs(v->get<double>()) < 9e18) {
    n = static_cast<int64_t>(v->get<double>());
  } else {
    WrongType(FieldPath(where, name), "an integer", *v);
  }
  if (n < min || n > max) {
    Fail(ErrorKind::kInvalidArgument, FieldPath(where, name) + " = " + std::to_string(n) +
                                          " is outside [" + std::to_string(min) + ", " +
                                          std::to_string(max) + "]");
  }
  return n;
}

const Json& RequiredField(const Json& object, std::string_view name, std::string_view where) {
  const Json* v = FindField(object, name);
  if (v == nullptr) Fail(ErrorKind::kInvalidArgument, FieldPath(where, name) + " is required");
  return *v;
}

std::string RequiredString(const Json& object, std::string_view name, std::string_view where) {
  const Json& v = RequiredField(object, name, where);
  if (!v.is_string()) WrongType(FieldPath(where, name), "a string", v);
  return v.get<std::string>();
}

int64_t TokenIdValue(const Json& value, std::string_view where) {
  if (!value.is_number_integer()) {
    Fail(ErrorKind::kInvalidArgument,
         std::string(where) + ": expected a token id, got " + JsonTypeName(value));
  }
  return value.get<int64_t>();
}

void ExpectType(const Json& value, std::string_view type, std::string_view name) {
  const bool ok =
      (type == "object" && value.is_object()) || (type == "array" && value.is_array()) ||
      (type == "string" && value.is_string()) || (type == "number" && value.is_number()) ||
      (type == "boolean" && value.is_boolean());
  if (!ok)
    WrongType(name, (type == "object" || type == "array" ? "an " : "a ") + std::string(type),
              value);
}

void CheckFields(const Json& object, std::initializer_list<FieldNames> read,
                 std::initializer_list<std::span<const NoOpField>> no_ops, std::string_view where) {
  for (const auto& item : object.items()) {
    // Not a structured binding: clang (the sanitized build) refuses one captured by a lambda.
    const std::string& key = item.key();
    const Json& value = item.value();
    const bool known = std::any_of(read.begin(), read.end(), [&](FieldNames names) {
      return std::find(names.begin(), names.end(), key) != names.end();
    });
    if (known) continue;
    const NoOpField* no_op = nullptr;
    for (std::span<const NoOpField> fields : no_ops) {
      for (const NoOpField& f : fields) {
        if (f.name == key) no_op = &f;
      }
    }
    if (no_op == nullptr) {
      Fail(ErrorKind::kInvalidArgument,
           FieldPath(where, key) + ": unknown field (not supported by tandem)");
    }
    if (!value.is_null() && !no_op->changes_nothing(value)) {
      Fail(ErrorKind::kInvalidArgument, FieldPath(where, key) + ": " + std::string(no_op->why));
    }
  }
}

void RejectUnknownFields(const Json& object, std::initializer_list<std::string_view> known,
                         std::string_view where) {
  CheckFields(object, {FieldNames(known.begin(), known.size())}, {}, where);
}

}  // namespace tandem::server
