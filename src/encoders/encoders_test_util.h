// Helpers for the encoders tests: temporary paths, tiny mmproj files and rewriting a GGUF with
// some keys or tensors changed (to build the bad files the error tests need).
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "gguf/gguf_reader.h"
#include "gguf/gguf_writer.h"

namespace tandem::testing {

// Unique per process: ctest runs the cases of a binary in parallel processes, and several cases
// write (and read back) files of the same name.
inline std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + std::to_string(getpid()) + "_" + name;
}

// Copies `src` to `dst`: every key (then `edit_keys` may change them), every tensor unless
// `edit_tensor` returns true for it (it has then added its replacement to the writer, or
// nothing to drop it).
inline void RewriteGguf(const std::string& src, const std::string& dst,
                        const std::function<void(GgufWriter&)>& edit_keys,
                        const std::function<bool(GgufWriter&, const TensorInfo&)>& edit_tensor) {
  auto file = GgufFile::Open(src);
  GgufWriter w;
  w.CopyMetadata(file->metadata());
  if (edit_keys) edit_keys(w);
  for (const TensorInfo& t : file->tensors()) {
    if (edit_tensor && edit_tensor(w, t)) continue;
    w.AddTensorFrom(*file, t);
  }
  w.Write(dst);
}

inline std::vector<uint8_t> F32Bytes(const std::vector<float>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(float));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The message of the tandem::Error `fn` throws ("" and a test failure if none).
inline std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

}  // namespace tandem::testing
