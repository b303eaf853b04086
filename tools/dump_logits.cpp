// tandem-dump-logits: evaluates a token sequence with the C++ forward pass and writes the raw
// logits and hidden states, for comparison with the NumPy reference (tests/reference_parity).
//
//   tandem-dump-logits -m MODEL.gguf --tokens 2,10,11 [--mode prefill|decode|chunks:N]
//                      [--kv-type f32] [--threads N] [--isa scalar|avx2|avx512] --out FILE
//   tandem-dump-logits -m MODEL.gguf --write-random tiny-e2b [--weight-type q8_0] [--seed S]
//   tandem-dump-logits --list-isas        (prints the kernel paths this machine runs, one a line)
//   tandem-dump-logits -m MODEL.gguf --tokens 2,505,507,506,10 --mmproj MM.gguf --image A.png
//                      [--image-attention auto|causal|bidirectional|bidirectional-sliding]
//                      [--image-resize budget|llamacpp] [--image-budget N]
//                      [--image-min-tokens N] [--image-max-tokens N] [--vision-gelu
//                      tanh|quick|file]
//                      [--pixels-out PREFIX] --out FILE
//   tandem-dump-logits -m MODEL.gguf --tokens 2,10,P,11 --mmproj MM.gguf --audio A.wav[,B.wav]
//                      [--image ...] --out FILE      (P: the vocabulary's <|audio|> id)
//
// Media (tools/prompt_media.h): each occurrence of the vocabulary's image placeholder token in
// --tokens takes the next --image file, each audio placeholder the next --audio recording,
// prepared, encoded and expanded as `tandem serve` does (the markup is ExpandMedia's). T is then
// the expanded length, and stdout gets one JSON line {"tokens": [every row's token], "images":
// [[begin, count], ...], "audio": [[begin, count], ...]}. Audio rows are causal whatever
// --image-attention says. Chunked modes never split an image (a chunk that would end inside one
// runs to its end), as the engine's prefill does; a recording's causal rows may be split.
// --pixels-out writes image i's prepared pixels to PREFIX<i>.npy (f32 [H][W][3]).
//
// Output FILE: little-endian f32 logits [T][V] (soft-capped) followed by hidden [T][D] (after the
// final norm), T = number of tokens. With --write-random the tool first writes a random-weight
// model of that preset to MODEL (like `tandem mkmodel`); --tokens/--out are then optional.
// Exit code 0 on success, 1 on a tandem::Error (one line on stderr), 2 on bad usage.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "kernels/isa.h"
#include "kernels/kv_types.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"
#include "model/gemma4/target.h"
#include "prompt_media.h"

namespace tandem {
namespace {

static_assert(std::endian::native == std::endian::little, "the output format is little-endian");

struct Args {
  std::string model;
  std::string tokens;
  std::string mode = "prefill";
  std::string kv_type = "f32";
  std::string isa;
  int threads = 1;
  std::string out;
  std::string write_random;
  std::string weight_type = "f32";
  uint64_t seed = 1234;
  bool list_isas = false;
  std::string image_attention = "auto";
  PromptMediaOptions media;
};

// "2,10,11" -> {2, 10, 11}. Range checks against the vocabulary happen in Forward.
std::vector<int32_t> ParseTokens(const std::string& text) {
  std::vector<int32_t> tokens;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || value < INT32_MIN || value > INT32_MAX) {
      Fail(ErrorKind::kInvalidArgument, "--tokens: '" + item + "' is not an integer token id");
    }
    tokens.push_back(static_cast<int32_t>(value));
    start = end + 1;
  }
  return tokens;
}

// Rows evaluated per Forward call for `mode` over `n_tokens` tokens.
int ChunkSize(const std::string& mode, int n_tokens) {
  if (mode == "prefill") return std::max(n_tokens, 1);
  if (mode == "decode") return 1;
  if (mode.rfind("chunks:", 0) == 0) {
    const std::string n = mode.substr(7);
    size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(n, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (!n.empty() && used == n.size() && value >= 1) return value;
  }
  Fail(ErrorKind::kInvalidArgument,
       "--mode: '" + mode + "' is not prefill, decode or chunks:N with N >= 1");
}

MediaAttention ParseMediaAttention(const Args& args) {
  const std::string& a = args.image_attention;
  if (a == "auto") return MediaAttention::kDefault;
  if (a == "causal") return MediaAttention::kCausal;
  if (a == "bidirectional") return MediaAttention::kBidirectional;
  if (a == "bidirectional-sliding") return MediaAttention::kBidirectionalSliding;
  Fail(ErrorKind::kInvalidArgument, "--image-attention: '" + a +
                                        "' is not auto, causal, bidirectional or "
                                        "bidirectional-sliding");
}

TensorType ParseType(const std::string& name, const char* option) {
  auto type = ParseTensorTypeName(name);
  if (!type)
    Fail(ErrorKind::kInvalidArgument, std::string(option) + ": unknown type '" + name + "'");
  return *type;
}

void WriteRandom(const Args& args) {
  RandomModelOptions options;
  options.seed = args.seed;
  options.weight_type = ParseType(args.weight_type, "--weight-type");
  options.name = "tandem random " + args.write_random;
  WriteRandomGemma4(Gemma4Preset(args.write_random), options, args.model);
}

// Evaluates the tokens in chunks and writes logits [T][V] then hidden [T][D] to args.out.
void Dump(const Args& args) {
  const std::vector<int32_t> tokens = ParseTokens(args.tokens);
  ChunkSize(args.mode, 1);  // checks --mode before any work
  const TensorType kv_type = ParseType(args.kv_type, "--kv-type");
  if (!kernels::IsKvCacheType(kv_type)) {
    Fail(ErrorKind::kInvalidArgument,
         "--kv-type: '" + args.kv_type + "' is not a KV cache type (f32, f16, bf16, q8_0, q4_0)");
  }
  if (!args.isa.empty()) {
    auto isa = kernels::ParseIsaName(args.isa);
    if (!isa) Fail(ErrorKind::kInvalidArgument, "--isa: unknown path '" + args.isa + "'");
    kernels::SetActiveIsa(*isa);
  }
  if (args.threads < 1) Fail(ErrorKind::kInvalidArgument, "--threads must be >= 1");

  auto model = Gemma4Model::Load(args.model, {.media_attention = ParseMediaAttention(args)});
  const int V = model->config().n_vocab;
  const int D = model->config().n_embd;
  ThreadPool pool(args.threads);

  // Media: the expanded prompt, and for each row the item it belongs to (-1: a token row).
  std::vector<int32_t> rows = tokens;
  std::vector<PromptMedia> media;
  if (!args.media.mmproj.empty()) {
    PromptWithMedia p = ExpandPromptMedia(tokens, args.media, *model, pool);
    rows = std::move(p.request.prompt);
    media = std::move(p.request.media);
    std::string list, images, audio;
    for (const int32_t t : rows) list += (list.empty() ? "" : ",") + std::to_string(t);
    for (const PromptMedia& m : media) {
      std::string& spans = m.audio ? audio : images;
      spans += std::string(spans.empty() ? "" : ",") + "[" + std::to_string(m.begin) + "," +
               std::to_string(m.count) + "]";
    }
    std::printf("{\"tokens\": [%s], \"images\": [%s], \"audio\": [%s]}\n", list.c_str(),
                images.c_str(), audio.c_str());
  } else if (!args.media.images.empty() || !args.media.audio.empty()) {
    Fail(ErrorKind::kInvalidArgument, "--image and --audio need --mmproj");
  }
  const int n_rows = static_cast<int>(rows.size());
  const int chunk = ChunkSize(args.mode, n_rows);
  std::vector<int> item_of(n_rows, -1);
  for (size_t i = 0; i < media.size(); ++i) {
    for (int r = media[i].begin; r < media[i].begin + media[i].count; ++r) {
      item_of[r] = static_cast<int>(i);
    }
  }
  const bool both_ways = model->MediaBidirectional();
  // A chunk stretched to an image's end holds at most chunk - 1 rows before the image.
  int widest = chunk;
  for (const PromptMedia& m : media) {
    if (!m.audio) widest = std::max(widest, chunk - 1 + m.count);
  }
  auto cache = model->NewKvCache({.type = kv_type,
                                  .n_ctx = std::max(n_rows, 1),
                                  .n_seq = 1,
                                  .max_batch = std::min(widest, std::max(n_rows, 1))});

  std::vector<float> logits;  // [T][V]
  std::vector<float> hidden;  // [T][D]
  logits.reserve(static_cast<size_t>(n_rows) * V);
  hidden.reserve(static_cast<size_t>(n_rows) * D);
  ForwardOutput out;
  for (int start = 0, end = 0; start < n_rows; start = end) {
    ForwardBatch batch;
    end = std::min(n_rows, start + chunk);
    // An image's rows go into one forward call.
    if (end < n_rows && item_of[end - 1] >= 0 && item_of[end] == item_of[end - 1] &&
        !media[item_of[end - 1]].audio) {
      const PromptMedia& m = media[item_of[end - 1]];
      end = m.begin + m.count;
    }
    for (int i = start; i < end; ++i) {
      if (item_of[i] < 0) {
        batch.Add(rows[i], i, 0, true);
        continue;
      }
      const PromptMedia& m = media[item_of[i]];
      const float* row = m.embeddings->data() + static_cast<size_t>(i - m.begin) * D;
      batch.AddEmbedding(row, i, 0, both_ways && !m.audio ? m.begin + m.count - 1 : i, true);
    }
    model->Forward(batch, *cache, out, pool);
    if (static_cast<int>(out.logit_rows.size()) != end - start || out.n_vocab != V ||
        out.n_embd != D) {
      Fail(ErrorKind::kInternal, "Forward returned an unexpected output shape");
    }
    for (int j = 0; j < end - start; ++j) {
      logits.insert(logits.end(), out.Logits(j), out.Logits(j) + V);
      hidden.insert(hidden.end(), out.Hidden(out.logit_rows[j]), out.Hidden(out.logit_rows[j]) + D);
    }
  }

  std::ofstream file(args.out, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(logits.data()),
             static_cast<std::streamsize>(logits.size() * sizeof(float)));
  file.write(reinterpret_cast<const char*>(hidden.data()),
             static_cast<std::streamsize>(hidden.size() * sizeof(float)));
  file.close();
  if (!file) Fail(ErrorKind::kIo, "cannot write '" + args.out + "'");
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  CLI::App app{"tandem-dump-logits: raw f32 logits [T][V] and hidden [T][D] of a token sequence"};
  tandem::Args args;
  std::string presets;
  for (const auto& n : tandem::Gemma4PresetNames()) presets += (presets.empty() ? "" : ", ") + n;
  app.add_option("-m,--model", args.model, "Model GGUF (written first with --write-random)");
  app.add_option("--tokens", args.tokens, "Comma-separated token ids, e.g. 2,10,11");
  app.add_option("--mode", args.mode, "prefill (one call), decode (one token per call) or chunks:N")
      ->capture_default_str();
  app.add_option("--kv-type", args.kv_type, "KV cache type: f32, f16, bf16, q8_0, q4_0")
      ->capture_default_str();
  app.add_option("--threads", args.threads, "Threads")->capture_default_str();
  app.add_option("--isa", args.isa, "Kernel path: scalar, avx2 or avx512 (default: best)");
  app.add_option("--out", args.out, "Output file: f32 logits [T][V] then hidden [T][D]");
  app.add_option("--write-random", args.write_random,
                 "First write a random-weight model of this preset to -m: " + presets);
  app.add_option("--weight-type", args.weight_type, "Weight type for --write-random")
      ->capture_default_str();
  app.add_option("--seed", args.seed, "Seed for --write-random")->capture_default_str();
  app.add_flag("--list-isas", args.list_isas, "Print the supported kernel paths and exit");
  app.add_option("--mmproj", args.media.mmproj,
                 "Projector (gemma4v, gemma4a) for --image and --audio");
  app.add_option("--image", args.media.images,
                 "Images (PNG, JPEG, WebP), one per image placeholder token in --tokens")
      ->delimiter(',');
  app.add_option("--audio", args.media.audio,
                 "Recordings (WAV, MP3, FLAC), one per audio placeholder token in --tokens")
      ->delimiter(',');
  app.add_option("--image-attention", args.image_attention,
                 "auto, causal, bidirectional or bidirectional-sliding (as tandem serve)")
      ->capture_default_str();
  app.add_option("--image-resize", args.media.resize, "budget or llamacpp (as tandem serve)")
      ->capture_default_str();
  app.add_option("--image-budget", args.media.budget, "Soft tokens per image, budget rule")
      ->capture_default_str();
  app.add_option("--image-min-tokens", args.media.min_tokens, "llamacpp rule")
      ->capture_default_str();
  app.add_option("--image-max-tokens", args.media.max_tokens, "llamacpp rule")
      ->capture_default_str();
  app.add_option("--vision-gelu", args.media.gelu, "tanh, quick or file (as tandem serve)")
      ->capture_default_str();
  app.add_option("--pixels-out", args.media.pixels_out,
                 "Write image i's prepared pixels to <this>i.npy (f32 [H][W][3])");
  try {
    app.parse(argc, argv);
    if (args.list_isas) {
      for (auto isa : tandem::kernels::SupportedIsas()) {
        std::printf("%s\n", std::string(tandem::kernels::IsaName(isa)).c_str());
      }
      return 0;
    }
    if (args.model.empty()) throw CLI::RequiredError("--model");
    if (args.write_random.empty() && (args.tokens.empty() || args.out.empty())) {
      throw CLI::ValidationError("--tokens and --out are required (unless --write-random)");
    }
    if (args.tokens.empty() != args.out.empty()) {
      throw CLI::ValidationError("--tokens and --out go together");
    }
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (!args.write_random.empty()) tandem::WriteRandom(args);
    if (!args.out.empty()) tandem::Dump(args);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-dump-logits: error: %s\n", e.what());
    return 1;
  }
}
