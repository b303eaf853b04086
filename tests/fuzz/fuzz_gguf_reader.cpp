// libFuzzer target: parse arbitrary bytes as GGUF and touch every value and tensor byte.
// Only tandem::Error may escape the parser; anything else (crash, leak, UB, OOM) is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/error.h"
#include "gguf/gguf_reader.h"

namespace {

void Touch(const tandem::GgufFile& file) {
  volatile size_t sink = 0;
  for (const tandem::GgufKv& kv : file.metadata().entries()) {
    sink = sink + kv.value.ToString(0).size();
    const tandem::GgufValue* v = file.Find(kv.key);
    uint32_t n = static_cast<uint32_t>(v->size());
    try {
      sink = sink + file.GetU32PerLayer(kv.key, n).size();
    } catch (const tandem::Error&) {
    }
    try {
      sink = sink + file.GetBoolPerLayer(kv.key, n).size();
    } catch (const tandem::Error&) {
    }
    if (v->is_array() && v->element_type() == tandem::GgufType::kString) {
      for (std::string_view s : file.GetStringArray(kv.key)) sink = sink + s.size();
    }
  }
  for (const tandem::TensorInfo& t : file.tensors()) {
    if (file.FindTensor(t.name) != &t) __builtin_trap();
    uint8_t acc = 0;
    for (uint8_t b : file.TensorBytes(t)) acc ^= b;
    sink = sink + acc + t.n_elements();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto file = tandem::GgufFile::FromBytes(std::span<const uint8_t>(data, size), "fuzz.gguf");
    Touch(*file);
  } catch (const tandem::Error&) {
  }
  return 0;
}
