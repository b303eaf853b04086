// A read-only memory mapping of a whole file. Weights stay in the page cache, never copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tandem {

class MappedFile {
 public:
  // Maps `path` read-only. Throws Error(kIo) naming the path and the OS reason.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  size_t size() const { return size_; }
  const uint8_t* data() const { return data_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // Copies [p, p + n), a range inside the mapping, to `dst` with pread(2), not through the
  // mapping: the pages stay in the page cache but never enter this process's resident set. For
  // tables read a row at a time (embeddings): Linux may map the whole page-cache folio around a
  // faulting page (up to 2 MiB), so each row read through the mapping can add far more than the
  // row to the resident set, and a long-running server would end up with whole embedding tables
  // resident. Thread-safe. Throws Error(kIo) naming the path and offset.
  void ReadAt(const void* p, size_t n, void* dst) const;

 private:
  std::string path_;
  int fd_ = -1;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Drops this process's copies of the whole pages inside [p, p + n) of a read-only file mapping
// (madvise MADV_DONTNEED): they leave the resident set and are read again from the file if
// touched. A hint: errors are ignored. (A conversion releases each tensor it has read, so its
// resident memory stays bounded by its chunks, not by the model size.)
void ReleaseMappedPages(const void* p, size_t n);
inline void ReleaseMappedPages(std::span<const uint8_t> bytes) {
  ReleaseMappedPages(bytes.data(), bytes.size());
}

}  // namespace tandem
