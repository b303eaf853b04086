// `tandem transcribe FILE`: the text spoken in a recording (or its English translation), through
// Gemma 4's audio tower and the chat format, with the MTP assistant when one is given.
#include <cstdio>
#include <memory>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/generation_report.h"
#include "cli/media_files.h"
#include "cli/model_options.h"
#include "engine/generator.h"
#include "multimodal/media_prompt.h"
#include "multimodal/transcription_prompt.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/chat_parser.h"
#include "tokenizer/streaming_decoder.h"

namespace tandem::cli {
namespace {

struct TranscribeArgs {
  ModelOptions model;
  SamplingParams sampling;
  std::string file;
  TranscriptionTask task;
  int n_predict = 1024;
  bool json = false;
};

int Transcribe(const TranscribeArgs& a, const CLI::App& app) {
  LoadedModels m = LoadModels(a.model, app);
  CheckAudio(1, m, "transcribe");
  const PreparedAudio audio = ReadAudioFile(a.file, m);
  ChatRenderOptions render;
  render.empty_thought_when_thinking_off = m.target->config().n_embd_per_layer == 0;
  const ChatMessage message = TranscriptionMessage(a.task);
  const std::string prompt = RenderChat({&message, 1}, {}, render);
  std::vector<MediaList> lists(1);
  lists[0].markup = FindAudioTokens(*m.tokenizer);
  lists[0].noun = "recording";
  lists[0].items.push_back(m.audio->ToMedia(audio));
  EngineRequest request;
  ExpandMedia(m.tokenizer->Encode(prompt, {.add_special = false, .parse_special = true}),
              std::move(lists), request);
  if (static_cast<int>(request.prompt.size()) >= m.kv.n_ctx) {
    Fail(ErrorKind::kInvalidArgument,
         a.file + ": the recording takes " + std::to_string(audio.tokens) +
             " soft tokens and the prompt " + std::to_string(request.prompt.size()) +
             ", but the context (-c) is " + std::to_string(m.kv.n_ctx));
  }
  Generator gen(*m.target, m.Drafters(), *m.pool, m.kv, !a.model.no_warmup);
  GenerateParams p;
  p.n_predict = a.n_predict;
  p.sampling = a.sampling;
  p.spec = m.spec;
  p.eog_tokens = m.tokenizer->eog_ids();
  StreamingDecoder decoder(*m.tokenizer, /*render_special=*/true);
  ChatOutputParser parser;
  std::string text;
  auto take = [&](const ParsedDelta& d) {
    const std::string content = d.Content();
    text += content;
    if (!a.json) {
      std::fwrite(content.data(), 1, content.size(), stdout);
      std::fflush(stdout);
    }
  };
  const GenerateResult r =
      gen.Generate(request.prompt, std::move(request.media), p, [&](int32_t token) {
        if (m.tokenizer->IsEog(token)) return true;
        take(parser.Feed(decoder.Push(token)));
        return true;
      });
  take(parser.Feed(decoder.Flush()));
  take(parser.Finish());
  if (a.json) {
    nlohmann::json j = GenerationJson(text, r, m, gen.cache().bytes());
    j["task"] = a.task.translate ? "translate" : "transcribe";
    j["duration"] = audio.seconds;
    if (!a.task.language.empty()) j["language"] = a.task.language;
    std::printf("%s\n", j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("\n");
    std::fprintf(stderr, "\n%s", GenerationSummary(r, m, gen.cache().bytes()).c_str());
  }
  return 0;
}

}  // namespace

void AddTranscribeCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub = app.add_subcommand(
      "transcribe",
      "Print the text spoken in a recording (WAV, FLAC, Ogg, MP3); needs -m and an "
      "-mm with an audio tower (Gemma 4 E2B, E4B)");
  auto a = std::make_shared<TranscribeArgs>();
  a->sampling.temperature = 0.0f;
  AddModelFlags(*sub, a->model);
  AddSamplingFlags(*sub, a->sampling);
  sub->add_option("file", a->file, "The recording")->required();
  sub->add_option("--language", a->task.language, "ISO-639-1 code of the speech (e.g. en)");
  sub->add_flag("--translate", a->task.translate, "Translate into English instead");
  sub->add_option("--prompt", a->task.prompt, "Earlier text or vocabulary to follow");
  sub->add_option("-n,--n-predict", a->n_predict, "Most tokens to write")->capture_default_str();
  sub->add_flag("--json", a->json, "Print one JSON object (text, duration, timings)");
  sub->callback([&runner, a, sub] { runner = [a, sub] { return Transcribe(*a, *sub); }; });
}

}  // namespace tandem::cli
