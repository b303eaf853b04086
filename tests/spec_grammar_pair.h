// The random tiny-e2b target and MTP assistant (Q8_0, centroid head) the constrained
// speculation tests draft and verify with (spec_grammar_test, spec_grammar_drafter_test,
// spec_layout_guess_test), their test vocabulary, sampled request parameters and the target's
// plain logits.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "engine/engine.h"
#include "engine/request.h"
#include "grammar/compiled_grammar.h"
#include "grammar/token_vocabulary.h"
#include "model/gemma4/assistant.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "speculative/loaded_drafters.h"

namespace tandem {

struct Pair {
  std::unique_ptr<Gemma4Model> target;
  std::unique_ptr<Gemma4Assistant> assistant;
};

inline constexpr int32_t kEog = 1;

// A 512-token vocabulary for the random tiny models: printable ASCII as single bytes (ids 2..96),
// some multi-byte JSON pieces, the rest not producible by a grammar; id 1 ends generation.
inline std::shared_ptr<const TokenVocabulary> TestVocabulary(int n_vocab) {
  std::vector<std::string> pieces(n_vocab);
  std::vector<uint8_t> matchable(n_vocab, 0);
  for (int c = 32; c <= 126; ++c) pieces[2 + c - 32] = std::string(1, static_cast<char>(c));
  const char* multi[] = {"{\"", "\":", "\": ", ", \"", "\"}", "true",   "false", "null", "ab",
                         "12",  "\n",  "  ",   "\"a",  "\"b", "\": \"", "\"]",   "[\"",  "}\n"};
  int id = 100;
  for (const char* m : multi) pieces[id++] = m;
  for (int i = 0; i < n_vocab; ++i) matchable[i] = !pieces[i].empty();
  return std::make_shared<const TokenVocabulary>(std::move(pieces), std::move(matchable),
                                                 std::vector<int32_t>{kEog});
}

inline std::string Text(const TokenVocabulary& vocab, const std::vector<int32_t>& tokens) {
  std::string s;
  for (const int32_t t : tokens) s += vocab.IsStop(t) ? "" : vocab.piece(t);
  return s;
}

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

// A sampled constrained request: temperature 1, top-k 40 (no top-p, min-p), fixed draft length
// `draft_max` (the type is the caller's), n_predict tokens, generation ending at kEog.
inline GenerateParams SampledConstrained(std::shared_ptr<CompiledGrammar> grammar, int n_predict,
                                         int draft_max) {
  GenerateParams params;
  params.n_predict = n_predict;
  params.sampling.temperature = 1.0f;
  params.sampling.top_k = 40;
  params.sampling.top_p = 1.0f;
  params.sampling.min_p = 0.0f;
  params.spec.draft_max = draft_max;
  params.spec.adaptive = false;
  params.eog_tokens = {kEog};
  params.grammar.grammar = std::move(grammar);
  return params;
}

// One request's events on a one-slot engine over the pair (no engine thread, f32 KV).
struct PairRun {
  std::vector<int32_t> tokens;
  std::vector<TokenLogprobs> logprobs;  // of the token events that carried them
  int missing_logprobs = 0;             // token events without
  SpeculationStats spec;                // the final event's
  std::string error;
};

inline PairRun RunOnPair(const Pair& pair, ThreadPool& pool, const std::vector<int32_t>& prompt,
                         const GenerateParams& params) {
  EngineOptions options;
  options.own_thread = false;
  options.kv = {.type = TensorType::kF32, .n_ctx = 128, .n_seq = 1, .max_batch = 64};
  Engine engine(*pair.target, MakeDrafters({*pair.target, pair.assistant.get(), nullptr, pool}),
                pool, options);
  PairRun o;
  engine.RunHere({prompt, params, [&](const EngineEvent& e) {
                    if (e.final) {
                      o.error = e.error;
                      if (e.result != nullptr) o.spec = e.result->spec;
                      return true;
                    }
                    o.tokens.push_back(e.token);
                    if (e.logprobs == nullptr) {
                      ++o.missing_logprobs;
                    } else {
                      o.logprobs.push_back(*e.logprobs);
                    }
                    return true;
                  }});
  return o;
}

// The target's logits row after `tokens`, from one plain (f32 KV) prefill forward.
inline std::vector<float> LastRowLogits(const Pair& pair, const std::vector<int32_t>& tokens,
                                        ThreadPool& pool) {
  auto cache = pair.target->NewKvCache({.type = TensorType::kF32, .n_ctx = 64});
  ForwardBatch batch;
  for (size_t i = 0; i < tokens.size(); ++i) {
    batch.Add(tokens[i], static_cast<int>(i), 0, i + 1 == tokens.size());
  }
  ForwardOutput out;
  pair.target->Forward(batch, *cache, out, pool);
  return std::vector<float>(out.Logits(0), out.Logits(0) + pair.target->config().n_vocab);
}

}  // namespace tandem
