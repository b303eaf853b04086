// libFuzzer: GBNF text -> Grammar. Any input must parse or throw tandem::Error, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "base/error.h"
#include "grammar/gbnf_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    tandem::ParseGbnf(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const tandem::Error&) {
  }
  return 0;
}
