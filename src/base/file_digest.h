// A cheap, deterministic identity of a file's content: its size, its first bytes and its last
// bytes hashed. For a GGUF model the head covers the metadata and the tensor table and the tail
// covers weights, so two files with the same layout but different weights differ too. Saved
// slots carry their model's digest so a restore into another model is refused.
#pragma once

#include <cstdint>
#include <string>

namespace tandem {

// FNV-1a 64 over `size` bytes, continuing from `hash`.
uint64_t Fnv1a64(const void* data, size_t size, uint64_t hash = 0xcbf29ce484222325ULL);

// The digest of the file at `path`: size, the first 8 MiB and the last 1 MiB. Throws
// Error(kIo) naming the file when it cannot be read.
uint64_t FileDigest(const std::string& path);

}  // namespace tandem
