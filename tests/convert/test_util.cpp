#include "test_util.h"

#include <sys/wait.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/thread_pool.h"
#include "model/forward_batch.h"
#include "model/gemma4/target.h"

namespace tandem::testing {

namespace {

// Removes every scratch directory when the test program ends.
class ScratchCleanup : public ::testing::Environment {
 public:
  static std::vector<std::filesystem::path>& Dirs() {
    static std::vector<std::filesystem::path> dirs;
    return dirs;
  }
  // TANDEM_KEEP_SCRATCH=1 keeps the directories (to look at the files, or to feed them to
  // llama.cpp by hand).
  void TearDown() override {
    if (std::getenv("TANDEM_KEEP_SCRATCH") != nullptr) return;
    std::error_code ec;
    for (const auto& d : Dirs()) std::filesystem::remove_all(d, ec);
  }
};

[[maybe_unused]] ::testing::Environment* const kCleanup =
    ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

}  // namespace

std::string ScratchDir(const std::string& tag) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      std::string("convert_") + info->test_suite_name() + "_" + info->name() + "_" + tag;
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ScratchCleanup::Dirs().push_back(dir);
  return dir.string();
}

ConvertSummary Convert(const std::string& hf_dir, const std::string& out, TensorType type,
                       int threads) {
  ConvertOptions options;
  options.input_dir = hf_dir;
  options.output_path = out;
  options.out_type = type;
  options.name = "test";
  options.progress = false;
  options.n_threads = threads;
  return ConvertHfToGguf(options);
}

std::vector<int32_t> TestTokens(int n_vocab, int n) {
  std::vector<int32_t> t = {2};
  for (int i = 1; i < n; ++i) t.push_back((i * 97 + 13) % (n_vocab - 20) + 17);
  return t;
}

std::vector<float> TandemLogits(const std::string& gguf, const std::vector<int32_t>& tokens) {
  auto model = Gemma4Model::Load(gguf);
  const int T = static_cast<int>(tokens.size());
  auto cache =
      model->NewKvCache({.type = TensorType::kF32, .n_ctx = T, .n_seq = 1, .max_batch = T});
  ForwardBatch batch;
  for (int i = 0; i < T; ++i) batch.Add(tokens[i], i, 0, true);
  ForwardOutput out;
  ThreadPool pool(2);
  model->Forward(batch, *cache, out, pool);
  return out.logits;
}

std::optional<std::vector<double>> HfReference(const std::string& args,
                                               const std::vector<int32_t>& tokens) {
  const std::string python = "/usr/bin/python3";
  if (!std::filesystem::exists(python) ||
      std::system((python + " -c 'import numpy' >/dev/null 2>&1").c_str()) != 0) {
    return std::nullopt;
  }
  const std::string out = ScratchDir("reference") + "/out.f64";
  std::string list;
  for (int32_t t : tokens) {
    if (!list.empty()) list += ',';
    list += std::to_string(t);
  }
  const std::string cmd = python + " " + TANDEM_SOURCE_DIR + "/tests/convert/hf_reference.py " +
                          args + (list.empty() ? "" : " --tokens " + list) + " --out " + out;
  const int rc = std::system(cmd.c_str());
  if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) return std::nullopt;
  EXPECT_EQ(rc, 0) << cmd;
  if (rc != 0) return std::vector<double>{};
  const std::vector<uint8_t> bytes = ReadAll(out);
  std::vector<double> values(bytes.size() / sizeof(double));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(double));
  return values;
}

std::optional<std::vector<double>> HfVisionReference(const std::string& hf_dir,
                                                     const std::vector<float>& rgb, int width,
                                                     int height) {
  const std::string pixels = ScratchDir("pixels") + "/image.f32";
  {
    std::ofstream out(pixels, std::ios::binary);
    out.write(reinterpret_cast<const char*>(rgb.data()),
              static_cast<std::streamsize>(rgb.size() * sizeof(float)));
  }
  return HfReference("vision " + hf_dir + " --pixels " + pixels + " --width " +
                         std::to_string(width) + " --height " + std::to_string(height),
                     {});
}

std::optional<std::vector<double>> HfAudioReference(const std::string& hf_dir,
                                                    const std::vector<float>& mel, int frames) {
  const std::string path = ScratchDir("mel") + "/mel.f32";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(mel.data()),
              static_cast<std::streamsize>(mel.size() * sizeof(float)));
  }
  return HfReference("audio " + hf_dir + " --mel " + path + " --frames " + std::to_string(frames),
                     {});
}

std::vector<uint8_t> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace tandem::testing
