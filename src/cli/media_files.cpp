#include "cli/media_files.h"

#include <fstream>
#include <iterator>
#include <span>
#include <vector>

#include "base/error.h"

namespace tandem::cli {
namespace {

std::vector<uint8_t> ReadBytes(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, path + ": cannot open " + what);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

void CheckImages(size_t count, const LoadedModels& m, const std::string& flag) {
  if (!m.images) {
    Fail(ErrorKind::kInvalidArgument,
         flag + ": this model has no vision projector: pass it with -mm/--mmproj");
  }
  try {
    m.images->CheckImageCount(count);
  } catch (const Error& e) {
    Fail(e.kind(), flag + ": " + e.what());
  }
}

void CheckAudio(size_t count, const LoadedModels& m, const std::string& flag) {
  if (!m.audio) {
    Fail(ErrorKind::kInvalidArgument,
         flag +
             ": no audio encoder is loaded: pass an mmproj with one (Gemma 4 E2B or E4B) "
             "with -mm/--mmproj");
  }
  try {
    m.audio->CheckCount(count);
  } catch (const Error& e) {
    Fail(e.kind(), flag + ": " + e.what());
  }
}

PreparedImage ReadImageFile(const std::string& path, LoadedModels& m) {
  const std::vector<uint8_t> bytes = ReadBytes(path, "image");
  try {
    return m.images->Prepare(bytes, "");
  } catch (const Error& e) {
    Fail(e.kind(), path + ": " + e.what());
  }
}

PreparedAudio ReadAudioFile(const std::string& path, LoadedModels& m) {
  const std::vector<uint8_t> bytes = ReadBytes(path, "audio file");
  try {
    return m.audio->Prepare(bytes, "");
  } catch (const Error& e) {
    Fail(e.kind(), path + ": " + e.what());
  }
}

}  // namespace tandem::cli
