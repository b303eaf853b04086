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

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Drops this process's copies of the whole pages inside [p, p + n) of a read-only file mapping
// (madvise MADV_DONTNEED): they leave the resident set and are read again from the file if
// touched. A hint: errors are ignored.
void ReleaseMappedPages(const void* p, size_t n);

}  // namespace tandem
