#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "base/error.h"

namespace tandem {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Fail(ErrorKind::kIo, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    Fail(ErrorKind::kIo, path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    Fail(ErrorKind::kIo, path + ": not a regular file");
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      Fail(ErrorKind::kIo, path + ": cannot mmap: " + std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  fd_ = fd;  // kept for ReadAt
}

void MappedFile::ReadAt(const void* p, size_t n, void* dst) const {
  const auto* begin = static_cast<const uint8_t*>(p);
  if (begin < data_ || n > size_ || static_cast<size_t>(begin - data_) > size_ - n) {
    Fail(ErrorKind::kInternal,
         path_ + ": read of " + std::to_string(n) + " bytes outside the mapping");
  }
  auto offset = static_cast<off_t>(begin - data_);
  auto* out = static_cast<uint8_t*>(dst);
  while (n > 0) {
    const ssize_t got = ::pread(fd_, out, n, offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      Fail(ErrorKind::kIo, path_ + ": cannot read " + std::to_string(n) + " bytes at offset " +
                               std::to_string(offset) + ": " +
                               (got < 0 ? std::strerror(errno) : "the file became shorter"));
    }
    out += got;
    offset += got;
    n -= static_cast<size_t>(got);
  }
}

void ReleaseMappedPages(const void* p, size_t n) {
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<uintptr_t>(p) + n) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace tandem
