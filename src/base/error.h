// Errors as values with a kind and a culprit: every failure names what was wrong and where.
#pragma once

#include <stdexcept>
#include <string>

namespace tandem {

enum class ErrorKind {
  kCorrupt,          // a file's bytes break its format (names file, field, offset)
  kUnsupported,      // well-formed, but a feature tandem does not implement
  kInvalidArgument,  // a caller or user passed something wrong
  kIo,               // the operating system refused (open, mmap, write)
  kNotFound,         // a named key, tensor or file is missing
  kInternal,         // a broken invariant inside tandem
  kUnavailable,      // refused for now (a full queue, shutting down): the caller may retry
};

const char* ErrorKindName(ErrorKind kind);

// Thrown at parse and load edges; the CLI and server catch it and report `what()`.
// Hot paths (kernels, the forward pass) never throw.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

[[noreturn]] void Fail(ErrorKind kind, const std::string& message);

}  // namespace tandem
