// tandem-encode-image: runs the gemma4v vision encoder of an mmproj file on images given as
// NumPy arrays (or generated), writes the soft tokens and prints the timings: the C++ side of
// the vision reference parity (tests/reference_parity/run_vision_parity.py) and a quick encode
// benchmark.
//
//   tandem-encode-image --mmproj M.gguf --pixels A.npy[,B.npy] [--batch] --out OUT.f32
//                       [--gelu tanh|quick|file] [--threads N] [--isa NAME] [--no-repack]
//   tandem-encode-image --mmproj M.gguf --size 672x960 [--repeat R]          (timing only)
//   tandem-encode-image --mmproj M.gguf --write-random tiny [--weight-type q8_0] [--seed S]
//                       [--n-embd D --n-head H --pooling K --no-clamps --no-standardize]
//   tandem-encode-image --list-isas        (the kernel paths this machine runs, one a line)
//
// Pixels: .npy float32 or float64 arrays [H][W][3], C order, already normalised (values in
// [0, 1] for Gemma 4). OUT: little-endian f32 soft tokens of every image in order, each
// [tokens][Dt]. Stdout: one JSON object {"tokens": [...], "n_embd": Dt, "encode_ms": [...]}
// (with --batch one time for the whole call). Exit code 0 on success, 1 on a tandem::Error
// (one line on stderr), 2 on bad usage.
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
#include "encoders/gemma4v/encoder.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/gemma4v/random_mmproj.h"
#include "kernels/isa.h"
#include "npy_read.h"

namespace tandem {
namespace {

struct Args {
  std::string mmproj;
  std::string pixels;
  std::string size;
  std::string out;
  std::string gelu = "tanh";
  std::string isa;
  int threads = 1;
  int repeat = 1;
  bool batch = false;
  bool no_repack = false;
  std::string write_random;
  std::string weight_type = "f32";
  uint64_t seed = 1234;
  int n_embd = 0, n_head = 0, pooling = 0;
  bool no_clamps = false, no_standardize = false;
};

struct Picture {
  std::vector<float> rgb;
  int width = 0, height = 0;
};

// A .npy float array [H][W][3].
Picture ReadPicture(const std::string& path) {
  NpyArray a = ReadNpy(path);
  if (a.shape.size() != 3 || a.shape[2] != 3) {
    Fail(ErrorKind::kInvalidArgument, path + ": not a float .npy image [H, W, 3]");
  }
  return Picture{std::move(a.values), a.shape[1], a.shape[0]};
}

// Deterministic pixels in [0, 1] for a "WxH" size.
Picture Generated(const std::string& size) {
  int w = 0, h = 0;
  if (std::sscanf(size.c_str(), "%dx%d", &w, &h) != 2 || w <= 0 || h <= 0) {
    Fail(ErrorKind::kInvalidArgument, "--size: expected WIDTHxHEIGHT, got '" + size + "'");
  }
  Picture p{std::vector<float>(static_cast<size_t>(w) * h * 3), w, h};
  uint32_t s = 12345;
  for (float& v : p.rgb) {
    s = s * 1664525u + 1013904223u;
    v = static_cast<float>(s >> 8) / 16777216.0f;
  }
  return p;
}

void WriteRandom(const Args& a) {
  Gemma4VisionConfig c = Gemma4VisionPreset(a.write_random);
  if (a.n_embd > 0) c.n_embd = a.n_embd;
  if (a.n_head > 0) c.n_head = c.n_head_kv = a.n_head;
  if (a.n_embd > 0 || a.n_head > 0) c.head_dim = c.n_embd / c.n_head;
  if (a.pooling > 0) c.pooling = a.pooling;
  if (a.no_clamps) c.clipped_linears = false;
  if (a.no_standardize) c.standardize = false;
  RandomMmprojOptions o;
  const auto type = ParseTensorTypeName(a.weight_type);
  if (!type) Fail(ErrorKind::kInvalidArgument, "unknown weight type '" + a.weight_type + "'");
  o.weight_type = *type;
  o.seed = a.seed;
  WriteRandomGemma4VisionMmproj(c, o, a.mmproj);
}

void Run(const Args& a) {
  if (!a.isa.empty()) {
    auto isa = kernels::ParseIsaName(a.isa);
    if (!isa) Fail(ErrorKind::kInvalidArgument, "--isa: unknown path '" + a.isa + "'");
    kernels::SetActiveIsa(*isa);
  }
  if (!a.write_random.empty()) WriteRandom(a);
  if (a.pixels.empty() && a.size.empty()) return;
  VisionOptions options;
  options.repack = !a.no_repack;
  options.gelu = a.gelu == "quick"  ? VisionGelu::kQuick
                 : a.gelu == "file" ? VisionGelu::kFromFile
                                    : VisionGelu::kTanh;
  auto encoder = Gemma4VisionEncoder::Load(a.mmproj, options);
  std::vector<Picture> pictures;
  if (!a.size.empty()) pictures.push_back(Generated(a.size));
  for (size_t b = 0; b < a.pixels.size();) {
    const size_t e = std::min(a.pixels.find(',', b), a.pixels.size());
    if (e > b) pictures.push_back(ReadPicture(a.pixels.substr(b, e - b)));
    b = e + 1;
  }
  ThreadPool pool(a.threads);
  std::vector<Gemma4VisionEncoder::Image> images;
  for (const Picture& p : pictures) images.push_back({p.rgb.data(), p.width, p.height});

  std::vector<std::vector<float>> out;
  std::vector<double> ms;
  using Clock = std::chrono::steady_clock;
  for (int r = 0; r < std::max(1, a.repeat); ++r) {
    out.clear();
    if (a.batch) {
      const auto t0 = Clock::now();
      out = encoder->EncodeBatch(images, pool);
      ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    } else {
      for (const auto& im : images) {
        const auto t0 = Clock::now();
        out.push_back(encoder->Encode(im.rgb, im.width, im.height, pool));
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    }
  }
  ReportEncodes(out, encoder->n_embd_out(), ms, a.out);
}

}  // namespace
}  // namespace tandem

int main(int argc, char** argv) {
  CLI::App app{"tandem-encode-image: soft tokens of images through an mmproj's gemma4v tower"};
  tandem::Args a;
  std::string presets;
  for (const auto& n : tandem::Gemma4VisionPresetNames()) {
    presets += (presets.empty() ? "" : ", ") + n;
  }
  bool list_isas = false;
  app.add_option("--mmproj", a.mmproj, "mmproj GGUF (written first with --write-random)");
  app.add_flag("--list-isas", list_isas, "Print the supported kernel paths and exit");
  app.add_option("--pixels", a.pixels, "Comma-separated .npy images [H,W,3], normalised");
  app.add_option("--size", a.size, "Also encode a generated WIDTHxHEIGHT image (timing)");
  app.add_option("--out", a.out, "Output: f32 soft tokens of every image, in order");
  app.add_option("--gelu", a.gelu, "FFN GELU: tanh (transformers), quick or file (llama.cpp)")
      ->check(CLI::IsMember({"tanh", "quick", "file"}))
      ->capture_default_str();
  app.add_option("--threads", a.threads, "Threads")->capture_default_str();
  app.add_option("--isa", a.isa, "Kernel path: scalar, avx2 or avx512 (default: best)");
  app.add_option("--repeat", a.repeat, "Encode this many times (timings of each)");
  app.add_flag("--batch", a.batch, "Encode all images in one call");
  app.add_flag("--no-repack", a.no_repack, "Keep quantized matrices row-major");
  app.add_option("--write-random", a.write_random, "First write a random mmproj: " + presets);
  app.add_option("--weight-type", a.weight_type, "Weight type for --write-random")
      ->capture_default_str();
  app.add_option("--seed", a.seed, "Seed for --write-random")->capture_default_str();
  app.add_option("--n-embd", a.n_embd, "--write-random: override Dv");
  app.add_option("--n-head", a.n_head, "--write-random: override the head count");
  app.add_option("--pooling", a.pooling, "--write-random: override the pooling kernel");
  app.add_flag("--no-clamps", a.no_clamps, "--write-random: no clamp bounds");
  app.add_flag("--no-standardize", a.no_standardize, "--write-random: no std_bias/std_scale");
  try {
    app.parse(argc, argv);
    if (list_isas) {
      for (auto isa : tandem::kernels::SupportedIsas()) {
        std::printf("%s\n", std::string(tandem::kernels::IsaName(isa)).c_str());
      }
      return 0;
    }
    if (a.mmproj.empty()) throw CLI::RequiredError("--mmproj");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    tandem::Run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tandem-encode-image: %s\n", e.what());
    return 1;
  }
  return 0;
}
