#include "encoders/mmproj_file.h"

#include <optional>

#include "base/error.h"
#include "encoders/mmproj_keys.h"

namespace tandem {
namespace {

// The Gemma 4 projector types and whether tandem runs them (the encoders in this folder).
struct KnownProjector {
  const char* name;
  Modality modality;
  bool supported;
  const char* what;
};

constexpr KnownProjector kKnownProjectors[] = {
    {"gemma4v", Modality::kVision, true, "Gemma 4 vision tower"},
    {"gemma4a", Modality::kAudio, true, "Gemma 4 audio conformer"},
    {"gemma4uv", Modality::kVision, false, "Gemma 4 unified 12B vision embedder"},
    {"gemma4ua", Modality::kAudio, false, "Gemma 4 unified 12B audio embedder"},
};

const KnownProjector* FindKnown(std::string_view name) {
  for (const KnownProjector& p : kKnownProjectors) {
    if (name == p.name) return &p;
  }
  return nullptr;
}

}  // namespace

std::string_view ModalityName(Modality modality) {
  return modality == Modality::kVision ? "vision" : "audio";
}

std::unique_ptr<MmprojFile> MmprojFile::Open(const std::string& path) {
  return FromGguf(GgufFile::Open(path));
}

std::unique_ptr<MmprojFile> MmprojFile::FromGguf(std::unique_ptr<GgufFile> file) {
  std::unique_ptr<MmprojFile> out(new MmprojFile(std::move(file)));
  out->Check();
  return out;
}

void MmprojFile::Check() {
  const GgufMetadata& md = file_->metadata();
  const std::string& p = file_->path();
  const std::optional<std::string_view> arch = md.FindString("general.architecture");
  if (!arch) {
    Fail(ErrorKind::kInvalidArgument,
         p + ": key 'general.architecture' not found; an mmproj file has 'clip'");
  }
  if (*arch != mmproj::kArchitecture) {
    Fail(ErrorKind::kInvalidArgument, p + ": general.architecture is '" + std::string(*arch) +
                                          "', expected 'clip' (not a multimodal projector file)");
  }
  const std::optional<std::string_view> shared = md.FindString(mmproj::kProjectorType);
  auto read = [&](const char* has_key, const char* type_key, std::string& projector,
                  std::string& key) {
    if (!md.FindBool(has_key).value_or(false)) return;
    if (shared) {
      projector = std::string(*shared);
      key = mmproj::kProjectorType;
    } else if (std::optional<std::string_view> own = md.FindString(type_key)) {
      projector = std::string(*own);
      key = type_key;
    }
    if (projector.empty()) {
      Fail(ErrorKind::kInvalidArgument,
           p + ": " + has_key + " is true but no projector type is set (neither '" +
               mmproj::kProjectorType + "' nor '" + type_key + "' holds a non-empty string)");
    }
  };
  read(mmproj::kHasVision, mmproj::kVisionProjectorType, vision_projector_, vision_key_);
  read(mmproj::kHasAudio, mmproj::kAudioProjectorType, audio_projector_, audio_key_);
  if (vision_projector_.empty() && audio_projector_.empty()) {
    Fail(ErrorKind::kInvalidArgument, p + ": the mmproj file has no encoder ('" +
                                          mmproj::kHasVision + "' and '" + mmproj::kHasAudio +
                                          "' are both absent or false)");
  }
}

bool MmprojFile::Supported(Modality m) const {
  const KnownProjector* known = FindKnown(Projector(m));
  return known != nullptr && known->modality == m && known->supported;
}

void MmprojFile::Require(Modality m, std::string_view projector) const {
  const std::string name(ModalityName(m));
  const std::string& have = Projector(m);
  if (have.empty()) {
    Fail(ErrorKind::kNotFound, path() + " has no " + name + " encoder ('clip.has_" + name +
                                   "_encoder' is absent or false)");
  }
  if (have == projector) return;
  const std::string head = path() + ": " + ProjectorKey(m) + " is '" + have + "': ";
  const KnownProjector* known = FindKnown(have);
  if (known != nullptr && known->modality == m && !known->supported) {
    Fail(ErrorKind::kUnsupported, head + "the " + known->what + " is not supported yet (tandem's " +
                                      name + " encoder is " + std::string(projector) + ")");
  }
  if (known != nullptr && known->modality != m) {
    Fail(ErrorKind::kUnsupported, head + "a " + std::string(ModalityName(known->modality)) +
                                      " projector type where a " + name + " one belongs");
  }
  Fail(ErrorKind::kUnsupported, head + "not a Gemma 4 projector type; tandem supports " +
                                    std::string(projector) + " for " + name);
}

std::string MmprojFile::Describe() const {
  std::string out;
  for (Modality m : {Modality::kVision, Modality::kAudio}) {
    if (!Has(m)) continue;
    if (!out.empty()) out += ", ";
    out += std::string(ModalityName(m)) + " " + Projector(m);
    if (!Supported(m)) {
      const KnownProjector* known = FindKnown(Projector(m));
      out += known != nullptr && known->modality == m ? " (not supported yet)" : " (unsupported)";
    }
  }
  return out;
}

}  // namespace tandem
