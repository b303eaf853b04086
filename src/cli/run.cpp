// `tandem run`: generate from a raw prompt (or chat interactively) with any gemma4 GGUF, streaming
// tokens and reporting speed, memory and speculative statistics.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "base/error.h"
#include "base/log.h"
#include "cli/commands.h"
#include "cli/generation_report.h"
#include "cli/grammar_options.h"
#include "cli/media_files.h"
#include "cli/model_options.h"
#include "engine/generator.h"
#include "multimodal/media_prompt.h"
#include "tokenizer/chat_format.h"
#include "tokenizer/chat_parser.h"
#include "tokenizer/stop_strings.h"
#include "tokenizer/streaming_decoder.h"

namespace tandem::cli {
namespace {

struct RunArgs {
  ModelOptions model;
  SamplingParams sampling;
  std::string prompt;
  std::string file;
  int n_predict = 256;
  std::vector<std::string> stop;
  bool json = false;
  bool chat = false;
  bool thinking = false;
  bool no_special = false;
  bool verbose_prompt = false;
  std::vector<std::string> images;
  std::vector<std::string> audio;
  GrammarOptions grammar;
};

std::string ReadAll(std::istream& in) {
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The prompt's media lists from --image and --audio files, and the prompt with each marker made
// the image placeholder (the images first when the prompt names none, as llama.cpp's CLI does;
// the recordings likewise where the prompt has no audio placeholder).
std::vector<MediaList> PrepareMedia(const RunArgs& a, LoadedModels& m, std::string& prompt) {
  std::vector<MediaList> lists;
  if (!a.audio.empty()) {
    CheckAudio(a.audio.size(), m);
    if (prompt.find(chat_marker::kAudio) == std::string::npos) {
      std::string front;
      for (size_t i = 0; i < a.audio.size(); ++i) front += chat_marker::kAudio;
      prompt = front + prompt;
    }
    MediaList& list = lists.emplace_back();
    list.markup = FindAudioTokens(*m.tokenizer);
    list.noun = "recording";
    for (const std::string& path : a.audio) {
      list.items.push_back(m.audio->ToMedia(ReadAudioFile(path, m)));
    }
  }
  if (a.images.empty()) return lists;
  CheckImages(a.images.size(), m);
  const int markers = ReplaceMediaMarkers(prompt);
  if (markers == 0 && prompt.find(chat_marker::kImage) == std::string::npos) {
    std::string front;
    for (size_t i = 0; i < a.images.size(); ++i) front += chat_marker::kImage;
    prompt = front + prompt;
  }
  MediaList& list = lists.emplace_back();
  list.markup = FindImageTokens(*m.tokenizer);
  for (const std::string& path : a.images) {
    list.items.push_back(m.images->ToMedia(ReadImageFile(path, m)));
  }
  return lists;
}

GenerateParams MakeParams(const RunArgs& a, const LoadedModels& m,
                          const GrammarConstraint& grammar) {
  GenerateParams p;
  if (isatty(STDERR_FILENO)) {  // a progress line for long prompts, on a terminal only
    p.on_prefill_progress = [](int done, int total) {
      if (total < 1024) return;
      std::fprintf(stderr, "\rprefill %d/%d tokens%s", done, total, done == total ? "\n" : "");
    };
  }
  p.n_predict = a.n_predict;
  p.sampling = a.sampling;
  p.spec = m.spec;
  p.eog_tokens = m.tokenizer->eog_ids();
  p.grammar = grammar;
  return p;
}

void ReportKvCache(const Generator& gen) {
  const KvCache& kv = gen.cache();
  LogInfo("KV cache: " + std::to_string(kv.bytes() / 1048576.0).substr(0, 6) + " MiB (" +
          std::string(TensorTypeName(kv.type())) + ", " + std::to_string(kv.n_ctx()) +
          " positions, " + std::to_string(kv.n_layers()) + " KV-owning layers)");
}

int RunPrompt(const RunArgs& a, const CLI::App& app) {
  std::string prompt = a.prompt;
  if (!a.file.empty()) {
    std::ifstream in(a.file, std::ios::binary);
    if (!in) Fail(ErrorKind::kIo, a.file + ": cannot open prompt file");
    prompt = ReadAll(in);
  } else if (prompt.empty() && !isatty(STDIN_FILENO)) {
    prompt = ReadAll(std::cin);
  }
  if (prompt.empty())
    Fail(ErrorKind::kInvalidArgument, "no prompt: pass -p TEXT, -f FILE or stdin");

  LoadedModels m = LoadModels(a.model, app);
  const GrammarConstraint grammar = LoadGrammarConstraint(a.grammar, *m.tokenizer, false);
  std::vector<MediaList> media = PrepareMedia(a, m, prompt);
  std::vector<int32_t> ids = m.tokenizer->Encode(
      prompt, {.add_special = true, .parse_special = !a.no_special || !media.empty()});
  EngineRequest with_media;
  if (!media.empty()) {
    ExpandMedia(ids, std::move(media), with_media);
    ids = with_media.prompt;
  }
  if (static_cast<int>(ids.size()) >= m.kv.n_ctx) {
    Fail(ErrorKind::kInvalidArgument, "the prompt has " + std::to_string(ids.size()) +
                                          " tokens but the context (-c) is " +
                                          std::to_string(m.kv.n_ctx));
  }
  Generator gen(*m.target, m.Drafters(), *m.pool, m.kv, !a.model.no_warmup);
  ReportKvCache(gen);
  StreamingDecoder decoder(*m.tokenizer);
  StopStringFilter stops(a.stop);
  std::string text;
  auto show = [&](const std::string& piece) {
    text += piece;
    if (!a.json && !piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
  };
  GenerateResult r =
      gen.Generate(ids, std::move(with_media.media), MakeParams(a, m, grammar), [&](int32_t token) {
        if (m.tokenizer->IsEog(token)) return true;
        show(stops.Feed(decoder.Push(token)));
        return !stops.stopped();
      });
  if (!stops.stopped()) show(stops.Feed(decoder.Flush()) + stops.Flush());
  if (stops.stopped()) r.stop_reason = StopReason::kStopString;
  const size_t kv_bytes = gen.cache().bytes();
  if (a.json) {
    // Generated text may hold invalid UTF-8 (byte tokens): replace it rather than fail.
    std::printf("%s\n", GenerationJson(text, r, m, kv_bytes)
                            .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                            .c_str());
  } else {
    std::printf("\n");
    std::fprintf(stderr, "\n%s", GenerationSummary(r, m, kv_bytes).c_str());
  }
  return 0;
}

int RunChat(const RunArgs& a, const CLI::App& app) {
  LoadedModels m = LoadModels(a.model, app);
  // The conversation's images, in order; the next user message takes those from `attached` on.
  std::vector<PreparedImage> images;
  size_t attached = 0;
  if (!a.images.empty()) {
    CheckImages(a.images.size(), m);
    for (const std::string& path : a.images) images.push_back(ReadImageFile(path, m));
  }
  // The conversation's recordings likewise.
  std::vector<PreparedAudio> recordings;
  size_t heard = 0;
  if (!a.audio.empty()) {
    CheckAudio(a.audio.size(), m);
    for (const std::string& path : a.audio) recordings.push_back(ReadAudioFile(path, m));
  }
  const GrammarConstraint grammar = LoadGrammarConstraint(a.grammar, *m.tokenizer, true);
  Generator gen(*m.target, m.Drafters(), *m.pool, m.kv, !a.model.no_warmup);
  ReportKvCache(gen);
  std::vector<ChatMessage> messages;
  bool thinking = a.thinking;
  ChatRenderOptions render;
  // 26B/31B (no per-layer embeddings) take an empty thought block when thinking is off.
  render.empty_thought_when_thinking_off = m.target->config().n_embd_per_layer == 0;
  std::fprintf(stderr, "chat: /reset clears the conversation, /think on|off, %s%s/exit quits\n",
               m.images ? "/image FILE attaches an image to your next message, " : "",
               m.audio ? "/audio FILE attaches a recording, " : "");
  std::string line;
  while (true) {
    std::fprintf(stderr, "> ");
    if (!std::getline(std::cin, line) || line == "/exit") break;
    if (line == "/reset") {
      messages.clear();
      images.clear();
      attached = 0;
      recordings.clear();
      heard = 0;
      std::fprintf(stderr, "(conversation cleared)\n");
      continue;
    }
    if (line == "/think on" || line == "/think off") {
      thinking = line == "/think on";
      std::fprintf(stderr, "(thinking %s)\n", thinking ? "on" : "off");
      continue;
    }
    if (line.rfind("/image ", 0) == 0) {
      try {
        CheckImages(images.size() + 1, m);
        const PreparedImage image = ReadImageFile(line.substr(7), m);
        images.push_back(image);
        std::fprintf(stderr, "(image attached: %dx%d, %d soft tokens)\n", image.pixels->width,
                     image.pixels->height, image.tokens);
      } catch (const Error& e) {
        LogError(e.what());
      }
      continue;
    }
    if (line.rfind("/audio ", 0) == 0) {
      try {
        CheckAudio(recordings.size() + 1, m, "/audio");
        const PreparedAudio audio = ReadAudioFile(line.substr(7), m);
        recordings.push_back(audio);
        std::fprintf(stderr, "(audio attached: %.1f s, %d soft tokens)\n", audio.seconds,
                     audio.tokens);
      } catch (const Error& e) {
        LogError(e.what());
      }
      continue;
    }
    if (line.empty()) continue;
    ChatMessage user;
    user.role = ChatRole::kUser;
    for (; attached < images.size(); ++attached) {
      user.parts.push_back(
          {.type = ContentType::kImage, .text = {}, .media = static_cast<int>(attached)});
    }
    for (; heard < recordings.size(); ++heard) {
      user.parts.push_back(
          {.type = ContentType::kAudio, .text = {}, .media = static_cast<int>(heard)});
    }
    if (user.parts.empty()) {
      user.content = line;
    } else {
      user.parts.push_back({.type = ContentType::kText, .text = line, .media = -1});
    }
    messages.push_back(user);
    render.thinking = thinking;
    const std::string prompt = RenderChat(messages, {}, render);
    // The media's soft tokens in place of their placeholders; items seen in earlier turns come
    // from the encoders' caches and their rows from the prompt cache.
    EngineRequest request;
    {
      std::vector<MediaList> lists;
      if (!images.empty()) {
        MediaList& list = lists.emplace_back();
        list.markup = FindImageTokens(*m.tokenizer);
        for (const PreparedImage& image : images) list.items.push_back(m.images->ToMedia(image));
      }
      if (!recordings.empty()) {
        MediaList& list = lists.emplace_back();
        list.markup = FindAudioTokens(*m.tokenizer);
        list.noun = "recording";
        for (const PreparedAudio& audio : recordings) list.items.push_back(m.audio->ToMedia(audio));
      }
      const std::vector<int32_t> tokens =
          m.tokenizer->Encode(prompt, {.add_special = false, .parse_special = true});
      if (lists.empty()) {
        request.prompt = tokens;
      } else {
        ExpandMedia(tokens, std::move(lists), request);
      }
    }
    StreamingDecoder decoder(*m.tokenizer, /*render_special=*/true);
    ChatOutputParser parser;
    StopStringFilter stops(a.stop);
    ChatMessage reply;
    reply.role = ChatRole::kAssistant;
    auto show = [&](const ParsedDelta& d) {
      const std::string reasoning = d.Reasoning(), content = d.Content();
      reply.reasoning += reasoning;
      reply.content += content;
      if (!reasoning.empty()) std::fprintf(stderr, "\x1b[2m%s\x1b[0m", reasoning.c_str());
      std::fwrite(content.data(), 1, content.size(), stdout);
      std::fflush(stdout);
      for (const auto& w : d.warnings) LogWarn(w);
    };
    // The constraint starts with the answer: thinking stays unconstrained.
    GrammarConstraint turn_grammar = grammar;
    if (!thinking) turn_grammar.thought_open = turn_grammar.thought_close = -1;
    GenerateResult r = gen.Generate(request.prompt, std::move(request.media),
                                    MakeParams(a, m, turn_grammar), [&](int32_t token) {
                                      if (m.tokenizer->IsEog(token)) return true;
                                      show(parser.Feed(stops.Feed(decoder.Push(token))));
                                      return !stops.stopped();
                                    });
    show(parser.Feed(stops.Feed(decoder.Flush()) + stops.Flush()));
    show(parser.Finish());
    messages.push_back(reply);
    std::printf("\n");
    std::fprintf(stderr, "%s", GenerationSummary(r, m, gen.cache().bytes()).c_str());
  }
  return 0;
}

}  // namespace

void AddRunCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub = app.add_subcommand("run", "Generate text with a gemma4 GGUF (and its MTP assistant)");
  auto a = std::make_shared<RunArgs>();
  AddModelFlags(*sub, a->model);
  AddSamplingFlags(*sub, a->sampling);
  sub->add_option("-p,--prompt", a->prompt, "Prompt text (raw, no chat template)");
  sub->add_option("-f,--file", a->file, "Read the prompt from a file");
  sub->add_option(
      "--image", a->images,
      "An image (PNG, JPEG, WebP) for the prompt, needs -mm; repeatable. Each "
      "<__media__> in the prompt is where the next one goes (all first if none); with --chat "
      "they go with the first message, and /image FILE attaches more");
  sub->add_option("--audio", a->audio,
                  "A recording (WAV, FLAC, Ogg, MP3) for the prompt, needs -mm with an audio "
                  "tower; repeatable. Each goes where the prompt has <|audio|> (all first if "
                  "none); with --chat they go with the first message, and /audio FILE attaches "
                  "more");
  sub->add_option("-n,--n-predict", a->n_predict, "Tokens to generate (-1: until end of text)")
      ->capture_default_str();
  sub->add_option("--stop", a->stop, "Stop string (repeatable)");
  sub->add_flag("--json", a->json, "Print one JSON object instead of streaming text");
  sub->add_flag("--chat", a->chat, "Interactive chat in the Gemma 4 chat format");
  sub->add_flag("--thinking", a->thinking, "Chat with thinking on (toggle with /think on|off)");
  sub->add_option("--grammar-file", a->grammar.grammar_file,
                  "Constrain the output to a GBNF grammar (llama.cpp syntax)");
  sub->add_option("--json-schema", a->grammar.json_schema_file,
                  "Constrain the output to a JSON Schema (file)");
  sub->add_flag("--json-one-line", a->grammar.json_one_line,
                "With --json-schema: fixed whitespace (`, ` and `: `, no newlines), so keys and "
                "separators are forced (drafted for free under speculation)");
  sub->add_flag("--no-special", a->no_special,
                "Do not turn special-token text in the prompt into tokens");
  sub->callback([&runner, a, sub] {
    runner = [a, sub] { return a->chat ? RunChat(*a, *sub) : RunPrompt(*a, *sub); };
  });
}

}  // namespace tandem::cli
