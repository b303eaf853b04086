// Test helper: builds safetensors files in memory (docs/formats.md) for the reader and converter
// tests. Header-only, so it stays out of the conversion library.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tensor/float16.h"

namespace tandem::testing {

struct StTensor {
  std::string name;
  std::string dtype;            // "F32", "F16", "BF16", "I64", "I32", ...
  std::vector<uint64_t> shape;  // PyTorch order
  std::vector<uint8_t> bytes;   // little-endian data
};

template <typename T>
std::vector<uint8_t> RawBytes(const std::vector<T>& v) {
  std::vector<uint8_t> out(v.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// `values` encoded as `dtype` ("F32", "F16" or "BF16"; rounding to nearest even).
inline std::vector<uint8_t> FloatBytes(const std::vector<float>& values, const std::string& dtype) {
  if (dtype == "F32") return RawBytes(values);
  std::vector<uint16_t> h(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    h[i] = dtype == "BF16" ? Fp32ToBf16(values[i]) : Fp32ToFp16(values[i]);
  }
  return RawBytes(h);
}

// The value a float survives as after a round trip through `dtype`.
inline float RoundTo(float v, const std::string& dtype) {
  if (dtype == "BF16") return Bf16ToFp32(Fp32ToBf16(v));
  if (dtype == "F16") return Fp16ToFp32(Fp32ToFp16(v));
  return v;
}

// The JSON header for `tensors` laid out back to back in order, with optional __metadata__.
inline std::string SafetensorsHeader(const std::vector<StTensor>& tensors,
                                     const nlohmann::json& metadata = nullptr) {
  nlohmann::json header = nlohmann::json::object();
  uint64_t offset = 0;
  for (const StTensor& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  return header.dump();
}

// A whole file: u64 header length, `header` padded with spaces to a multiple of 8, the data.
inline std::vector<uint8_t> SafetensorsBytes(const std::vector<StTensor>& tensors,
                                             std::string header) {
  while ((8 + header.size()) % 8 != 0) header += ' ';
  size_t total = 8 + header.size();
  for (const StTensor& t : tensors) total += t.bytes.size();
  std::vector<uint8_t> out(total);
  const uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  std::memcpy(out.data() + 8, header.data(), header.size());
  size_t pos = 8 + header.size();
  for (const StTensor& t : tensors) {
    if (!t.bytes.empty()) std::memcpy(out.data() + pos, t.bytes.data(), t.bytes.size());
    pos += t.bytes.size();
  }
  return out;
}

inline std::vector<uint8_t> SafetensorsBytes(const std::vector<StTensor>& tensors) {
  return SafetensorsBytes(tensors, SafetensorsHeader(tensors));
}

inline void WriteBytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

inline void WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace tandem::testing
