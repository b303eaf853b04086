// tandem-encode-audio: runs the gemma4a audio encoder of an mmproj file on log-mel features given
// as NumPy arrays, writes the soft tokens and prints the timings: the C++ side of the audio
// reference parity (tests/reference_parity/run_audio_parity.py) and a quick encode benchmark.
//
//   tandem-encode-audio --mmproj M.gguf --mel A.npy[,B.npy] --out OUT.f32 [--threads N]
//                       [--isa NAME] [--no-repack] [--repeat R]
//   tandem-encode-audio --mmproj M.gguf --frames 3000 [--repeat R]          (timing only)
//   tandem-encode-audio --mmproj M.gguf --write-random tiny [--weight-type q8_0] [--seed S]
//                       [--no-clamps]
//   tandem-encode-audio --list-isas        (the kernel paths this machine runs, one a line)
//
// Mel: .npy float32 or float64 arrays [frames][n_mel], each one piece (the front end cuts a
// recording into 30 s pieces). OUT: little-endian f32 soft tokens of every piece in order, each
// [tokens][Dt]. Stdout: one JSON object {"tokens": [...], "n_embd": Dt, "encode_ms": [...]}.
// Exit code 0 on success, 1 on a tandem::Error (one line on stderr), 2 on bad usage.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encode_report.h"
#include "encoders/gemma4a/encoder.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4a/random_mmproj.h"
#include "kernels/isa.h"
#include "npy_read.h"
#include "tensor/type_traits.h"

namespace tandem {
namespace {

struct Args {
  std::string mmproj;
  std::string mel;
  int frames = 0;
  std::string out;
  std::string isa;
  int threads = 1;
  int repeat = 1;
  bool no_repack = false;
  std::string write_random;
  std::string weight_type = "f32";
  uint64_t seed = 1234;
  bool no_clamps = false;
};

void WriteRandom(const Args& a) {
  Gemma4AudioConfig c = Gemma4AudioPreset(a.write_random);
  if (a.no_clamps) c.clipped_linears = false;
  RandomMmprojOptions o;
  const auto type = ParseTensorTypeName(a.weight_type);
  if (!type) Fail(ErrorKind::kInvalidArgument, "unknown weight type '" + a.weight_type + "'");
  o.weight_type = *type;
  o.seed = a.seed;
  o.name = "tandem random gemma4a mmproj";
  WriteRandomGemma4AudioMmproj(c, o, a.mmproj);
}

void Run(const Args& a) {
  if (!a.isa.empty()) {
    auto isa = kernels::ParseIsaName(a.isa);
    if (!isa) Fail(ErrorKind::kInvalidArgument, "--isa: unknown path '" + a.isa + "'");
    kernels::SetActiveIsa(*isa);
  }
  if (!a.write_random.empty()) WriteRandom(a);
  if (a.mel.empty() && a.frames <= 0) return;
  AudioEncoderOptions options;
  options.repack = !a.no_repack;
  auto encoder = Gemma4AudioEncoder::Load(a.mmproj, options);
  const int n_mel = encoder->config().n_mel;
  std::vector<std::vector<float>> values;
  std::vector<Gemma4AudioEncoder::Mel> pieces;
  if (a.frames > 0) {  // deterministic features in [-8, 2], about what speech gives
    std::vector<float> v(static_cast<size_t>(a.frames) * n_mel);
    uint32_t s = 12345;
    for (float& x : v) {
      s = s * 1664525u + 1013904223u;
      x = static_cast<float>(s >> 8) / 16777216.0f * 10.0f - 8.0f;
    }
    values.push_back(std::move(v));
  }
  for (size_t b = 0; b < a.mel.size();) {
    const size_t e = std::min(a.mel.find(',', b), a.mel.size());
    if (e > b) {
      const std::string path = a.mel.substr(b, e - b);
      NpyArray arr = ReadNpy(path);
      if (arr.shape.size() != 2 || arr.shape[1] != n_mel) {
        Fail(ErrorKind::kInvalidArgument,
             path + ": expected mel features [frames, " + std::to_string(n_mel) + "]");
      }
      values.push_back(std::move(arr.values));
    }
    b = e + 1;
  }
  for (const auto& v : values) {
    pieces.push_back({v.data(), static_cast<int>(v.size() / static_cast<size_t>(n_mel))});
  }
  ThreadPool pool(a.threads);
  std::vector<std::vector<float>> out;
  std::vector<double> ms;
  using Clock = std::chrono::steady_clock;
  for (int r = 0; r < std::max(1, a.repeat); ++r) {
    out.clear();
    for (const auto& piece : pieces) {
      const auto t0 = Clock::now();
      out.push_back(encoder->Encode({&piece, 1}, pool));
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    }
  }
  ReportEncodes(out, encoder->n_embd_out(), ms, a.out);
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  CLI::App app{"tandem-encode-audio: soft tokens of log-mel features through an mmproj's gemma4a"};
  tandem::Args a;
  std::string presets;
  for (const auto& n : tandem::Gemma4AudioPresetNames()) {
    presets += (presets.empty() ? "" : ", ") + n;
  }
  bool list_isas = false;
  app.add_option("--mmproj", a.mmproj, "mmproj GGUF (written first with --write-random)");
  app.add_flag("--list-isas", list_isas, "Print the supported kernel paths and exit");
  app.add_option("--mel", a.mel, "Comma-separated .npy mel pieces [frames, n_mel]");
  app.add_option("--frames", a.frames, "Also encode generated features of this many frames");
  app.add_option("--out", a.out, "Output: f32 soft tokens of every piece, in order");
  app.add_option("--threads", a.threads, "Threads")->capture_default_str();
  app.add_option("--isa", a.isa, "Kernel path: scalar, avx2 or avx512 (default: best)");
  app.add_option("--repeat", a.repeat, "Encode this many times (timings of each)");
  app.add_flag("--no-repack", a.no_repack, "Keep quantized matrices row-major");
  app.add_option("--write-random", a.write_random, "First write a random mmproj: " + presets);
  app.add_option("--weight-type", a.weight_type, "Weight type for --write-random")
      ->capture_default_str();
  app.add_option("--seed", a.seed, "Seed for --write-random")->capture_default_str();
  app.add_flag("--no-clamps", a.no_clamps, "--write-random: no clamp bounds");
  try {
    app.parse(argc, argv);
    if (list_isas) {
      for (auto isa : tandem::kernels::SupportedIsas()) {
        std::printf("%s\n", std::string(tandem::kernels::IsaName(isa)).c_str());
      }
      return 0;
    }
    if (a.mmproj.empty()) throw CLI::RequiredError("--mmproj");
    if (a.mel.empty() && a.frames <= 0 && a.write_random.empty()) {
      throw CLI::ValidationError("nothing to do: give --mel, --frames or --write-random");
    }
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    tandem::Run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-encode-audio: %s\n", e.what());
    return 1;
  }
  return 0;
}
