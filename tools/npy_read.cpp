#include "npy_read.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

#include "base/error.h"

namespace tandem {

NpyArray ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, "cannot read '" + path + "'");
  const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                std::istreambuf_iterator<char>()};
  auto bad = [&](const std::string& why) {
    Fail(ErrorKind::kInvalidArgument, path + ": not a float .npy array: " + why);
  };
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) bad("no NPY magic");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, offset = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    offset = 10;
  } else {
    if (bytes.size() < 12) bad("short header");
    uint32_t n;
    std::memcpy(&n, bytes.data() + 8, 4);
    header_len = n;
    offset = 12;
  }
  if (offset + header_len > bytes.size()) bad("short header");
  const std::string header(bytes.data() + offset, header_len);
  offset += header_len;
  const bool f4 = header.find("'<f4'") != std::string::npos;
  const bool f8 = header.find("'<f8'") != std::string::npos;
  if (!f4 && !f8) bad("dtype is not <f4 or <f8");
  if (header.find("'fortran_order': False") == std::string::npos) bad("not C order");
  const size_t open = header.find("'shape': (");
  if (open == std::string::npos) bad("no shape");
  NpyArray a;
  size_t n = 1;
  const char* p = header.c_str() + open + 10;
  while (*p != ')' && *p != '\0') {
    char* end = nullptr;
    const long d = std::strtol(p, &end, 10);
    if (end == p) break;
    if (d <= 0) bad("a dimension is not positive");
    a.shape.push_back(static_cast<int>(d));
    n *= static_cast<size_t>(d);
    p = end;
    while (*p == ',' || *p == ' ') ++p;
  }
  if (a.shape.empty()) bad("no dimensions");
  if (bytes.size() - offset != n * (f4 ? 4 : 8)) bad("data size does not match the shape");
  a.values.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (f4) {
      std::memcpy(&a.values[i], bytes.data() + offset + 4 * i, 4);
    } else {
      double d;
      std::memcpy(&d, bytes.data() + offset + 8 * i, 8);
      a.values[i] = static_cast<float>(d);
    }
  }
  return a;
}

}  // namespace tandem
