// The tiny random models this room's tests share, written once per test process: a tiny-e2b
// target and its assistant, and an mmproj file with both towers (vision and audio), as
// `tandem mkmodel --config tiny-e2b --mmproj` writes them.
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "encoders/gemma4a/encoder.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4v/encoder.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/random_mmproj.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem::testing_multimodal {

struct Fixture {
  std::unique_ptr<Gemma4Model> target;
  std::unique_ptr<Gemma4Assistant> assistant;
  // The same pair loaded with llama.cpp's image rule (media rows attend both ways on every layer).
  std::unique_ptr<Gemma4Model> target_both_ways;
  std::unique_ptr<Gemma4Assistant> assistant_both_ways;
  std::unique_ptr<Gemma4VisionEncoder> vision;
  std::unique_ptr<Gemma4AudioEncoder> audio;
  std::unique_ptr<Tokenizer> tokenizer;
};

inline const Fixture& Models() {
  static const Fixture* f = [] {
    const std::string dir = ::testing::TempDir() + "multimodal_" + std::to_string(getpid()) + "_";
    WriteRandomGemma4(Gemma4Preset("tiny-e2b"), {}, dir + "t.gguf");
    WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", true), {}, dir + "a.gguf");
    const Gemma4VisionConfig vision = Gemma4VisionPreset("tiny");
    const Gemma4AudioConfig audio = Gemma4AudioPreset("tiny");
    WriteRandomMmproj(&vision, &audio, {}, dir + "mm.gguf");
    auto* p = new Fixture;
    p->target = Gemma4Model::Load(dir + "t.gguf");
    p->assistant = Gemma4Assistant::Load(dir + "a.gguf", *p->target);
    p->target_both_ways = Gemma4Model::Load(
        dir + "t.gguf", {.repack = true, .media_attention = MediaAttention::kBidirectional});
    p->assistant_both_ways = Gemma4Assistant::Load(dir + "a.gguf", *p->target_both_ways);
    p->vision = Gemma4VisionEncoder::Load(dir + "mm.gguf");
    p->audio = Gemma4AudioEncoder::Load(dir + "mm.gguf");
    p->tokenizer = std::make_unique<Tokenizer>(VocabFromGgufMetadata(p->target->metadata()));
    return p;
  }();
  return *f;
}

}  // namespace tandem::testing_multimodal
