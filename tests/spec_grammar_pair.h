// The random tiny-e2b target and MTP assistant (Q8_0, centroid head) the constrained
// speculation tests draft and verify with (spec_grammar_test, spec_grammar_drafter_test).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "model/gemma4_assistant.h"
#include "model/gemma4_model.h"
#include "model/gemma4_presets.h"
#include "model/random_model.h"

namespace tandem {

struct Pair {
  std::unique_ptr<Gemma4Model> target;
  std::unique_ptr<Gemma4Assistant> assistant;
};

// Writes the pair under the test temp dir with `name` as the file prefix and loads it.
inline Pair MakePair(const std::string& name) {
  const std::string dir = testing::TempDir() + name + "_";
  RandomModelOptions options;
  options.weight_type = TensorType::kQ8_0;
  WriteRandomGemma4(Gemma4Preset("tiny-e2b"), options, dir + "target.gguf");
  WriteRandomGemma4Assistant(Gemma4AssistantPreset("tiny-e2b", true), options,
                             dir + "assistant.gguf");
  Pair p;
  p.target = Gemma4Model::Load(dir + "target.gguf");
  p.assistant = Gemma4Assistant::Load(dir + "assistant.gguf", *p.target);
  return p;
}

}  // namespace tandem
