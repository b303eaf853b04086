// MmprojFile: which encoders a file has, and clear errors for files that are not usable mmproj
// files (wrong architecture, mistyped flags, missing or unsupported projector types).
#include "encoders/mmproj_file.h"

#include <gtest/gtest.h>

#include "encoders/encoders_test_util.h"
#include "encoders/mmproj_keys.h"

namespace tandem {
namespace {

using testing::ErrorOf;
using testing::TempPath;

// A metadata-only GGUF at `name`, with the keys `set` writes.
std::string Write(const std::string& name, const std::function<void(GgufWriter&)>& set) {
  GgufWriter w;
  set(w);
  const std::string path = TempPath(name);
  w.Write(path);
  return path;
}

void Clip(GgufWriter& w) {
  w.SetString("general.architecture", "clip");
}

TEST(MmprojFile, ReadsPerModalityProjectorTypes) {
  const std::string path = Write("mm_both.gguf", [](GgufWriter& w) {
    Clip(w);
    w.SetBool(mmproj::kHasVision, true);
    w.SetBool(mmproj::kHasAudio, true);
    w.SetString(mmproj::kVisionProjectorType, "gemma4v");
    w.SetString(mmproj::kAudioProjectorType, "gemma4a");
  });
  auto f = MmprojFile::Open(path);
  EXPECT_TRUE(f->Has(Modality::kVision));
  EXPECT_TRUE(f->Has(Modality::kAudio));
  EXPECT_EQ(f->Projector(Modality::kVision), "gemma4v");
  EXPECT_EQ(f->Projector(Modality::kAudio), "gemma4a");
  EXPECT_EQ(f->ProjectorKey(Modality::kVision), "clip.vision.projector_type");
  EXPECT_TRUE(f->Supported(Modality::kVision));
  EXPECT_TRUE(f->Supported(Modality::kAudio));
  EXPECT_EQ(f->Describe(), "vision gemma4v, audio gemma4a");
  f->Require(Modality::kVision, "gemma4v");  // no throw
  f->Require(Modality::kAudio, "gemma4a");
  const std::string msg = ErrorOf([&] { f->Require(Modality::kAudio, "gemma4a-impl"); });
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("clip.audio.projector_type"), std::string::npos) << msg;
}

TEST(MmprojFile, VisionOnlyFileHasNoAudio) {
  const std::string path = Write("mm_vision.gguf", [](GgufWriter& w) {
    Clip(w);
    w.SetBool(mmproj::kHasVision, true);
    w.SetString(mmproj::kVisionProjectorType, "gemma4v");
    w.SetString(mmproj::kAudioProjectorType, "gemma4a");  // ignored: no has_audio_encoder
  });
  auto f = MmprojFile::Open(path);
  EXPECT_FALSE(f->Has(Modality::kAudio));
  EXPECT_EQ(f->Describe(), "vision gemma4v");
  const std::string msg = ErrorOf([&] { f->Require(Modality::kAudio, "gemma4a"); });
  EXPECT_NE(msg.find("has no audio encoder"), std::string::npos) << msg;
}

TEST(MmprojFile, SharedProjectorTypeWinsAsInLlamaCpp) {
  const std::string path = Write("mm_shared.gguf", [](GgufWriter& w) {
    Clip(w);
    w.SetBool(mmproj::kHasVision, true);
    w.SetString(mmproj::kProjectorType, "gemma4uv");
    w.SetString(mmproj::kVisionProjectorType, "gemma4v");
  });
  auto f = MmprojFile::Open(path);
  EXPECT_EQ(f->Projector(Modality::kVision), "gemma4uv");
  EXPECT_EQ(f->ProjectorKey(Modality::kVision), "clip.projector_type");
  const std::string msg = ErrorOf([&] { f->Require(Modality::kVision, "gemma4v"); });
  EXPECT_NE(msg.find("'gemma4uv'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not supported yet"), std::string::npos) << msg;
}

TEST(MmprojFile, UnknownProjectorTypeIsNamed) {
  const std::string path = Write("mm_mlp.gguf", [](GgufWriter& w) {
    Clip(w);
    w.SetBool(mmproj::kHasVision, true);
    w.SetString(mmproj::kVisionProjectorType, "mlp");
  });
  auto f = MmprojFile::Open(path);
  EXPECT_EQ(f->Describe(), "vision mlp (unsupported)");
  const std::string msg = ErrorOf([&] { f->Require(Modality::kVision, "gemma4v"); });
  EXPECT_NE(msg.find("clip.vision.projector_type is 'mlp'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a Gemma 4 projector"), std::string::npos) << msg;
}

TEST(MmprojFile, AudioTypeInTheVisionKeyIsRefused) {
  const std::string path = Write("mm_swapped.gguf", [](GgufWriter& w) {
    Clip(w);
    w.SetBool(mmproj::kHasVision, true);
    w.SetString(mmproj::kVisionProjectorType, "gemma4a");
  });
  const std::string msg =
      ErrorOf([&] { MmprojFile::Open(path)->Require(Modality::kVision, "gemma4v"); });
  EXPECT_NE(msg.find("audio projector type"), std::string::npos) << msg;
}

TEST(MmprojFile, StructuralErrorsNameTheFileAndKey) {
  struct Case {
    const char* file;
    std::function<void(GgufWriter&)> set;
    const char* expect;
  };
  const Case cases[] = {
      {"mm_arch.gguf",
       [](GgufWriter& w) {
         w.SetString("general.architecture", "gemma4");
         w.SetBool(mmproj::kHasVision, true);
       },
       "general.architecture is 'gemma4', expected 'clip'"},
      {"mm_noarch.gguf", [](GgufWriter& w) { w.SetBool(mmproj::kHasVision, true); },
       "key 'general.architecture' not found"},
      {"mm_archtype.gguf", [](GgufWriter& w) { w.SetU32("general.architecture", 1); },
       "key 'general.architecture' has type u32, expected string"},
      {"mm_flagtype.gguf",
       [](GgufWriter& w) {
         Clip(w);
         w.SetU32(mmproj::kHasVision, 1);
         w.SetString(mmproj::kVisionProjectorType, "gemma4v");
       },
       "key 'clip.has_vision_encoder' has type u32, expected bool"},
      {"mm_notype.gguf",
       [](GgufWriter& w) {
         Clip(w);
         w.SetBool(mmproj::kHasVision, true);
       },
       "clip.has_vision_encoder is true but no projector type is set"},
      {"mm_typetype.gguf",
       [](GgufWriter& w) {
         Clip(w);
         w.SetBool(mmproj::kHasVision, true);
         w.SetU32(mmproj::kVisionProjectorType, 7);
       },
       "key 'clip.vision.projector_type' has type u32, expected string"},
      {"mm_none.gguf",
       [](GgufWriter& w) {
         Clip(w);
         w.SetBool(mmproj::kHasVision, false);
         w.SetString(mmproj::kVisionProjectorType, "gemma4v");
       },
       "the mmproj file has no encoder"},
  };
  for (const Case& c : cases) {
    const std::string path = Write(c.file, c.set);
    const std::string msg = ErrorOf([&] { MmprojFile::Open(path); });
    EXPECT_NE(msg.find(path), std::string::npos) << c.file << ": " << msg;
    EXPECT_NE(msg.find(c.expect), std::string::npos) << c.file << ": " << msg;
  }
}

}  // namespace
}  // namespace tandem
