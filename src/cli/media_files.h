// Image and audio files named on the command line (`tandem run --image/--audio`, `/image` and
// `/audio` in chat, `tandem transcribe`), read and prepared for a prompt; errors name the file
// or the flag.
#pragma once

#include <string>

#include "cli/model_options.h"

namespace tandem::cli {

// Throws Error(kInvalidArgument) naming `flag` when no vision (audio) tower is loaded or when
// `count` items are over the per-request limit.
void CheckImages(size_t count, const LoadedModels& m, const std::string& flag = "--image");
void CheckAudio(size_t count, const LoadedModels& m, const std::string& flag = "--audio");

// The file's bytes, prepared; errors name the file.
PreparedImage ReadImageFile(const std::string& path, LoadedModels& m);
PreparedAudio ReadAudioFile(const std::string& path, LoadedModels& m);

}  // namespace tandem::cli
