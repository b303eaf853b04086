// libFuzzer: JSON Schema text -> GBNF -> Grammar. Must compile or throw tandem::Error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "grammar/gbnf_parser.h"
#include "grammar/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tandem::ParseGbnf(
        tandem::JsonSchemaTextToGbnf(std::string_view(reinterpret_cast<const char*>(data), size)));
  } catch (const tandem::Error&) {
  }
  return 0;
}
