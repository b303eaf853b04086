#include "prompt_media.h"

#include <bit>
#include <fstream>
#include <iterator>
#include <memory>

#include "base/error.h"
#include "base/thread_pool.h"
#include "encoders/gemma4a/encoder.h"
#include "encoders/gemma4v/encoder.h"
#include "model/gemma4/target.h"
#include "multimodal/audio_input.h"
#include "multimodal/image_input.h"
#include "multimodal/media_prompt.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem {
namespace {

static_assert(std::endian::native == std::endian::little, "the .npy files are little-endian");

std::vector<uint8_t> ReadBytes(const std::string& path, const std::string& option) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail(ErrorKind::kIo, option + ": cannot open '" + path + "'");
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) Fail(ErrorKind::kIo, option + ": cannot read '" + path + "'");
  return bytes;
}

// NPY version 1.0: magic, header length, a dict padded with spaces to a multiple of 64 bytes.
void WriteNpy(const std::string& path, const VisionPixels& px) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(px.height) + ", " + std::to_string(px.width) + ", 3), }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char*>(&len), 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(px.rgb.data()),
            static_cast<std::streamsize>(px.rgb.size() * sizeof(float)));
  out.close();
  if (!out) Fail(ErrorKind::kIo, "--pixels-out: cannot write '" + path + "'");
}

VisionGelu ParseGelu(const std::string& name) {
  if (name == "tanh") return VisionGelu::kTanh;
  if (name == "quick") return VisionGelu::kQuick;
  if (name == "file") return VisionGelu::kFromFile;
  Fail(ErrorKind::kInvalidArgument, "--vision-gelu: '" + name + "' is not tanh, quick or file");
}

void CheckWidth(const std::string& mmproj, const char* tower, int width, int n_embd) {
  if (width != n_embd) {
    Fail(ErrorKind::kInvalidArgument, mmproj + ": the " + tower + " projector writes rows of " +
                                          std::to_string(width) + " values, the model takes " +
                                          std::to_string(n_embd));
  }
}

// Runs the item's encode job (if its rows are not there yet) to the end.
void Encode(PromptMedia& m, ThreadPool& pool) {
  while (m.job && !m.job->Step(pool)) {
  }
  if (m.job) m.embeddings = m.job->Result();
  m.job = nullptr;
}

std::vector<PromptMedia> ImageItems(const PromptMediaOptions& options, const Gemma4Model& model,
                                    ThreadPool& pool) {
  if (options.resize != "budget" && options.resize != "llamacpp") {
    Fail(ErrorKind::kInvalidArgument,
         "--image-resize: '" + options.resize + "' is not budget or llamacpp");
  }
  VisionOptions vision;
  vision.gelu = ParseGelu(options.gelu);
  std::vector<PromptMedia> items;
  if (options.images.empty()) return items;
  auto encoder = Gemma4VisionEncoder::Load(options.mmproj, vision);
  CheckWidth(options.mmproj, "vision", encoder->n_embd_out(), model.n_embd());
  ImageInputOptions input;
  input.prepare.rule = options.resize == "llamacpp" ? ResizeRule::kLlamaCpp : ResizeRule::kBudget;
  input.prepare.budget_tokens = options.budget;
  input.prepare.min_tokens = options.min_tokens;
  input.prepare.max_tokens = options.max_tokens;
  ImageInput images(*encoder, input);
  for (size_t i = 0; i < options.images.size(); ++i) {
    const PreparedImage prepared = images.Prepare(ReadBytes(options.images[i], "--image"), "");
    if (!options.pixels_out.empty()) {
      WriteNpy(options.pixels_out + std::to_string(i) + ".npy", *prepared.pixels);
    }
    items.push_back(images.ToMedia(prepared));
    Encode(items.back(), pool);
  }
  return items;
}

std::vector<PromptMedia> AudioItems(const PromptMediaOptions& options, const Gemma4Model& model,
                                    ThreadPool& pool) {
  auto encoder = Gemma4AudioEncoder::Load(options.mmproj);
  CheckWidth(options.mmproj, "audio", encoder->n_embd_out(), model.n_embd());
  AudioInput audio(*encoder, {});
  std::vector<PromptMedia> items;
  for (const std::string& file : options.audio) {
    items.push_back(audio.ToMedia(audio.Prepare(ReadBytes(file, "--audio"), "")));
    Encode(items.back(), pool);
  }
  return items;
}

}  // namespace

PromptWithMedia ExpandPromptMedia(const std::vector<int32_t>& tokens,
                                  const PromptMediaOptions& options, const Gemma4Model& model,
                                  ThreadPool& pool) {
  const Tokenizer tokenizer(LoadVocabFromGguf(model.file()));
  // The image list always: an image placeholder with no --image file is an error.
  std::vector<MediaList> lists;
  lists.push_back({FindImageTokens(tokenizer), ImageItems(options, model, pool), "image"});
  if (!options.audio.empty()) {
    lists.push_back({FindAudioTokens(tokenizer), AudioItems(options, model, pool), "recording"});
  }
  PromptWithMedia out;
  ExpandMedia(tokens, std::move(lists), out.request);
  return out;
}

}  // namespace tandem
