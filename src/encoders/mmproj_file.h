// An opened llama.cpp multimodal projector ("mmproj") GGUF: `general.architecture = clip`, one
// file holding every encoder of a checkpoint (Gemma 4 E2B/E4B: vision and audio; 26B/31B: vision
// only). This class says which encoders the file has and of which projector type; each encoder
// (encoders/gemma4v/, encoders/gemma4a/) reads its own keys and tensors from gguf().
// docs/vision.md § The mmproj file.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "gguf/gguf_reader.h"

namespace tandem {

enum class Modality { kVision, kAudio };

// "vision", "audio".
std::string_view ModalityName(Modality modality);

class MmprojFile {
 public:
  // Opens and checks `path`: general.architecture must be the string "clip"; the
  // clip.has_*_encoder flags, when present, bool; each encoder the file claims must name its
  // projector type (a string in clip.projector_type or clip.<modality>.projector_type, the first
  // winning as in llama.cpp); at least one encoder. Throws Error naming the file and the key.
  static std::unique_ptr<MmprojFile> Open(const std::string& path);
  // The same checks on an already parsed file.
  static std::unique_ptr<MmprojFile> FromGguf(std::unique_ptr<GgufFile> file);

  const GgufFile& gguf() const { return *file_; }
  const std::string& path() const { return file_->path(); }

  bool Has(Modality m) const { return !Projector(m).empty(); }
  // The projector type of the file's `m` encoder as stored ("gemma4v", "gemma4a"); empty if the
  // file has no such encoder.
  const std::string& Projector(Modality m) const {
    return m == Modality::kVision ? vision_projector_ : audio_projector_;
  }
  // The key the projector type was read from (for messages); empty if none.
  const std::string& ProjectorKey(Modality m) const {
    return m == Modality::kVision ? vision_key_ : audio_key_;
  }
  // Whether tandem can run the `m` encoder of this file (false when absent).
  bool Supported(Modality m) const;

  // Throws unless the file has an `m` encoder whose projector type is `projector`: Error(kNotFound)
  // "FILE has no vision encoder (...)", Error(kUnsupported) naming the key and the type, with
  // "not supported yet" for the Gemma 4 types tandem does not run yet (gemma4uv, gemma4ua) and "not a Gemma 4 projector" for others.
  void Require(Modality m, std::string_view projector) const;

  // One line for listings: "vision gemma4v, audio gemma4a" ("(not supported yet)" after a type
  // tandem does not run).
  std::string Describe() const;

 private:
  explicit MmprojFile(std::unique_ptr<GgufFile> file) : file_(std::move(file)) {}
  void Check();

  std::unique_ptr<GgufFile> file_;
  std::string vision_projector_, audio_projector_;
  std::string vision_key_, audio_key_;
};

}  // namespace tandem
