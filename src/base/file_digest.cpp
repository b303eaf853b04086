#include "base/file_digest.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include "base/error.h"

namespace tandem {

uint64_t Fnv1a64(const void* data, size_t size, uint64_t hash) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

uint64_t FileDigest(const std::string& path) {
  constexpr uint64_t kHead = 8ULL << 20, kTail = 1ULL << 20;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) Fail(ErrorKind::kIo, path + ": cannot open to take its digest");
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  uint64_t hash = Fnv1a64(&size, sizeof(size));
  std::vector<char> buf;
  auto take = [&](uint64_t offset, uint64_t n) {
    buf.resize(n);
    in.seekg(static_cast<std::streamoff>(offset));
    in.read(buf.data(), static_cast<std::streamsize>(n));
    if (!in) Fail(ErrorKind::kIo, path + ": cannot read at offset " + std::to_string(offset));
    hash = Fnv1a64(buf.data(), n, hash);
  };
  take(0, std::min(size, kHead));
  if (size > kHead) take(size - std::min(size - kHead, kTail), std::min(size - kHead, kTail));
  return hash;
}

}  // namespace tandem
