#include "encoders/random_mmproj.h"

#include "base/error.h"
#include "encoders/gemma4a/random_mmproj.h"
#include "encoders/gemma4v/random_mmproj.h"
#include "encoders/mmproj_layout.h"
#include "gguf/gguf_writer.h"
#include "tensor/quantize.h"

namespace tandem {

void WriteRandomMmproj(const Gemma4VisionConfig* vision, const Gemma4AudioConfig* audio,
                       const RandomMmprojOptions& options, const std::string& path) {
  const TensorType wtype = options.weight_type;
  if (wtype != TensorType::kF32 && !CanQuantize(wtype)) {
    Fail(ErrorKind::kUnsupported,
         "mkmodel: cannot write mmproj weights of type " + std::string(TensorTypeName(wtype)));
  }
  if (vision == nullptr && audio == nullptr) {
    Fail(ErrorKind::kInvalidArgument, "mkmodel: an mmproj file needs at least one encoder");
  }
  if (vision != nullptr) vision->Validate("mmproj writer");
  if (audio != nullptr) audio->Validate("mmproj writer");
  GgufWriter w;
  WriteMmprojGeneralKeys(wtype, options.name, w);
  if (vision != nullptr) vision->WriteToGguf(w);
  if (audio != nullptr) audio->WriteToGguf(w);
  if (vision != nullptr) AddRandomGemma4VisionTensors(*vision, options, w);
  if (audio != nullptr) AddRandomGemma4AudioTensors(*audio, options, w);
  w.Write(path);
}

}  // namespace tandem
