#include "base/error.h"

namespace tandem {

const char* ErrorKindName(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kCorrupt:
      return "corrupt";
    case ErrorKind::kUnsupported:
      return "unsupported";
    case ErrorKind::kInvalidArgument:
      return "invalid argument";
    case ErrorKind::kIo:
      return "i/o";
    case ErrorKind::kNotFound:
      return "not found";
    case ErrorKind::kInternal:
      return "internal";
    case ErrorKind::kUnavailable:
      return "unavailable";
  }
  return "unknown";
}

void Fail(ErrorKind kind, const std::string& message) {
  throw Error(kind, message);
}

}  // namespace tandem
