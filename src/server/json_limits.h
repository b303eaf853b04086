// Bounds on request JSON, checked on the raw text before any recursive code (copies, dumps,
// the chat renderer) touches a parsed value: nesting depth, array lengths and string sizes.
#pragma once

#include <cstddef>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tandem::server {

struct JsonLimits {
  int max_depth = 64;                // nested objects and arrays
  size_t max_array = 200000;         // elements of one array (a token-id prompt fills a context)
  size_t max_string = 4u << 20;      // bytes of one string or key
  size_t max_object_members = 4096;  // members of one object
};

// Parses `text` as JSON within `limits`. Throws Error(kInvalidArgument) naming the path of the
// first value beyond a limit (e.g. "tools[0].function.parameters.properties.a: nesting deeper
// than 64"), or the byte offset of malformed JSON; `what` names the text ("the request body").
nlohmann::ordered_json ParseBoundedJson(std::string_view text, std::string_view what,
                                        const JsonLimits& limits = {});

}  // namespace tandem::server
