#include "cli/model_options.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "base/log.h"
#include "encoders/mmproj_file.h"
#include "gguf/gguf_reader.h"
#include "speculative/drafter_registry.h"
#include "speculative/loaded_drafters.h"
#include "tokenizer/vocab_gguf.h"

namespace tandem::cli {
namespace {

// What --spec-type auto picks for each drafter model, in the help's words.
constexpr std::pair<DrafterModel, const char*> kAutoModels[] = {
    {DrafterModel::kAssistant, "an assistant"}, {DrafterModel::kSeparate, "a draft model"}};

// auto, every registered drafter's name, none.
std::vector<std::string> SpecTypeValues() {
  std::vector<std::string> values = {"auto"};
  for (const SpecType type : DrafterTypes()) values.emplace_back(SpecTypeName(type));
  values.emplace_back(SpecTypeName(SpecType::kNone));
  return values;
}

std::string SpecTypeHelp() {
  std::string help = "Speculation: auto (";
  for (const auto& [model, words] : kAutoModels) {
    const SpecType type = AutoSpecType(model);
    if (type != SpecType::kNone) help += std::string(SpecTypeName(type)) + " with " + words + ", ";
  }
  help += "else none)";
  for (const SpecType type : DrafterTypes()) {
    const DrafterEntry& entry = DrafterEntryOf(type);
    help += std::string(", ") + entry.name;
    if (*entry.help != '\0') help += std::string(" (") + entry.help + ")";
  }
  return help + ", " + SpecTypeName(SpecType::kNone);
}

// The drafter model a -md file holds, by its architecture.
DrafterModel DrafterModelOf(const std::string& path) {
  const std::string arch(GgufFile::Open(path)->GetString("general.architecture"));
  if (arch == "gemma4-assistant") return DrafterModel::kAssistant;
  if (arch == "gemma4") return DrafterModel::kSeparate;
  Fail(ErrorKind::kInvalidArgument,
       path + ": architecture '" + arch + "' is neither gemma4-assistant nor gemma4");
}

// Refuses `type` when it drafts with another kind of model than the -md file `path` holds.
void CheckDrafterModel(SpecType type, DrafterModel loaded, const std::string& path) {
  if (type == SpecType::kNone) return;
  const DrafterModel wanted = DrafterEntryOf(type).model;
  if (wanted == DrafterModel::kNone || wanted == loaded) return;
  std::string fits;
  for (const SpecType t : DrafterTypes()) {
    if (DrafterEntryOf(t).model != loaded) continue;
    fits += std::string(fits.empty() ? "" : " or ") + SpecTypeName(t);
  }
  Fail(ErrorKind::kInvalidArgument,
       path +
           (loaded == DrafterModel::kAssistant ? " is an MTP assistant"
                                               : " is a gemma4 model, not an assistant") +
           "; use --spec-type " + fits + " (or auto)");
}

}  // namespace

void AddModelFlags(CLI::App& app, ModelOptions& o) {
  app.add_option("-m,--model", o.model, "Target model (gemma4 GGUF)")->required();
  app.add_option("--model-draft", o.model_draft,
                 "Drafter: a gemma4-assistant GGUF (MTP) or a small gemma4 GGUF");
  app.add_option("--spec-type", o.spec_type, SpecTypeHelp())
      ->check(CLI::IsMember(SpecTypeValues()))
      ->capture_default_str();
  app.add_option("--spec-ngram-min", o.ngram_min, "Shortest context suffix prompt lookup matches")
      ->capture_default_str();
  app.add_option("--spec-ngram-max", o.ngram_max, "Longest context suffix prompt lookup matches")
      ->capture_default_str();
  app.add_option("--spec-suffix-mib", o.suffix_mib,
                 "Memory for suffix drafting's index of earlier requests (MiB; --spec-type " +
                     DrafterNamesWhere(&DrafterEntry::suffix) + ")")
      ->check(CLI::Range(size_t{1}, size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--draft-head", o.draft_head,
                 "Assistant LM head: auto (centroid when present), centroid, dense")
      ->check(CLI::IsMember({"auto", "centroid", "dense"}))
      ->capture_default_str();
  app.add_option("--draft-max,--draft,--spec-draft-n-max", o.draft_max,
                 "Most tokens drafted per round")
      ->capture_default_str();
  app.add_option("--draft-min,--spec-draft-n-min", o.draft_min,
                 "Rounds drafting fewer tokens are dropped")
      ->capture_default_str();
  app.add_option("--draft-p-min,--spec-draft-p-min", o.draft_p_min,
                 "Stop drafting below this top-10 probability")
      ->capture_default_str();
  app.add_option("--draft-tree", o.draft_tree,
                 "Draft trees: where the MTP assistant is unsure, branch to its top N tokens "
                 "(2-4) and verify every branch in one forward; 0: chains")
      ->capture_default_str();
  app.add_flag("--no-adaptive", o.no_adaptive,
               "Always draft --draft-max tokens instead of choosing per round");
  app.add_option("-c,--ctx-size", o.ctx_size, "Context size in tokens")->capture_default_str();
  app.add_option("-b,--batch-size", o.batch_size, "Most rows per forward pass")
      ->capture_default_str();
  app.add_option("-t,--threads", o.threads, "Threads (0: physical cores)")->capture_default_str();
  app.add_option("--cache-type-k,--kv-type", o.cache_type_k,
                 "KV cache type: f16, bf16, f32, q8_0, q4_0")
      ->capture_default_str();
  app.add_option("--cache-type-v", o.cache_type_v, "Must equal -ctk (one KV type)");
  app.add_flag("--no-repack", o.no_repack,
               "Keep weights in the file mapping: no interleaved copies in RAM (less memory, "
               "slower prefill and verification, the same results)");
  app.add_option(
      "--mmproj", o.mmproj,
      "-mm: the projector file (llama.cpp's mmproj GGUF): image input with a gemma4v tower, "
      "audio input with a gemma4a tower (E2B, E4B)");
  app.add_option("--image-attention", o.image_attention,
                 "How an image's soft tokens attend to each other: auto (transformers: causal for "
                 "E2B/E4B, both ways on sliding layers for the others), causal, bidirectional "
                 "(llama.cpp: every layer), bidirectional-sliding")
      ->check(CLI::IsMember({"auto", "causal", "bidirectional", "bidirectional-sliding"}))
      ->capture_default_str();
  app.add_option("--image-resize", o.image_resize,
                 "Image size rule: budget (transformers: fill --image-budget soft tokens, "
                 "antialiased bicubic) or llamacpp (about the native size within "
                 "--image-min-tokens..--image-max-tokens, bilinear letterbox)")
      ->check(CLI::IsMember({"budget", "llamacpp"}))
      ->capture_default_str();
  app.add_option("--image-budget", o.image_budget,
                 "Soft tokens per image: 70, 140, 280, 560 or 1120")
      ->check(CLI::IsMember({70, 140, 280, 560, 1120}))
      ->capture_default_str();
  app.add_option("--image-min-tokens", o.image_min_tokens, "With --image-resize llamacpp")
      ->capture_default_str();
  app.add_option("--image-max-tokens", o.image_max_tokens, "With --image-resize llamacpp")
      ->capture_default_str();
  app.add_option("--image-max-count", o.image_max_count,
                 "Most images one request (or one `tandem run`) may hold")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--audio-max-count", o.audio_max_count,
                 "Most audio parts one request (or one `tandem run`) may hold")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--audio-log-floor", o.audio_log_floor,
                 "Log-mel floor: add (transformers: ln(mel + 0.001)) or clamp (llama.cpp: "
                 "ln(max(mel, 0.001)))")
      ->check(CLI::IsMember({"add", "clamp"}))
      ->capture_default_str();
  app.add_option("--vision-gelu", o.vision_gelu,
                 "Vision FFN activation: tanh (transformers), quick (GELU-quick), file "
                 "(llama.cpp's rule: quick unless the file sets clip.use_gelu)")
      ->check(CLI::IsMember({"tanh", "quick", "file"}))
      ->capture_default_str();
  app.add_flag("--no-warmup", o.no_warmup,
               "Skip the warm-up (a few short generations before the first request, so its "
               "latency and the speculation planner's first timings are not a cold start's)");
}

void AddSamplingFlags(CLI::App& app, SamplingParams& p) {
  app.add_option("--temp,--temperature", p.temperature, "Temperature (<= 0: greedy)")
      ->capture_default_str();
  app.add_option("--top-k", p.top_k, "Top-k (0: off)")->capture_default_str();
  app.add_option("--top-p", p.top_p, "Top-p (1: off)")->capture_default_str();
  app.add_option("--min-p", p.min_p, "Min-p (0: off)")->capture_default_str();
  app.add_option("--repeat-penalty", p.repeat_penalty, "Repetition penalty (1: off)")
      ->capture_default_str();
  app.add_option("--repeat-last-n", p.repeat_last_n, "Penalty window (0: off, -1: all)")
      ->capture_default_str();
  app.add_option("--presence-penalty", p.presence_penalty, "Presence penalty")
      ->capture_default_str();
  app.add_option("--frequency-penalty", p.frequency_penalty, "Frequency penalty")
      ->capture_default_str();
  app.add_option("-s,--seed", p.seed, "Seed (default: random)");
}

namespace {

bool Given(const CLI::App& app, const char* name) {
  const CLI::Option* opt = app.get_option_no_throw(name);
  return opt != nullptr && opt->count() > 0;
}

}  // namespace

LoadedModels LoadModels(const ModelOptions& o, const CLI::App& app) {
  // The speculation flags first: a bad value fails before the models load.
  SpecOptions flags;
  flags.draft_max = o.draft_max;
  flags.draft_min = o.draft_min;
  flags.draft_p_min = o.draft_p_min;
  flags.tree_width = o.draft_tree;
  ValidateSpecOptions(flags);
  ValidateNgramLengths(o.ngram_min, o.ngram_max, "--spec-ngram-min/max");
  LoadedModels m;
  auto t0 = std::chrono::steady_clock::now();
  auto kv_type = ParseTensorTypeName(o.cache_type_k);
  if (!kv_type || !kernels::IsKvCacheType(*kv_type)) {
    Fail(ErrorKind::kInvalidArgument,
         "-ctk " + o.cache_type_k + ": the KV cache type must be f16, bf16, f32, q8_0 or q4_0");
  }
  if (!o.cache_type_v.empty() && o.cache_type_v != o.cache_type_k) {
    Fail(ErrorKind::kInvalidArgument,
         "-ctv " + o.cache_type_v + " differs from -ctk " + o.cache_type_k +
             ": tandem stores K and V in one type (the MTP assistant reads both)");
  }
  if (o.ctx_size <= 0 || o.batch_size <= 0) {
    Fail(ErrorKind::kInvalidArgument, "--ctx-size and --batch-size must be > 0");
  }
  m.kv = {.type = *kv_type,
          .n_ctx = o.ctx_size,
          .n_seq = 1,
          .max_batch = std::min(o.batch_size, o.ctx_size)};
  m.pool = std::make_unique<ThreadPool>(o.threads);
  const MediaAttention media_attention =
      o.image_attention == "causal"                  ? MediaAttention::kCausal
      : o.image_attention == "bidirectional"         ? MediaAttention::kBidirectional
      : o.image_attention == "bidirectional-sliding" ? MediaAttention::kBidirectionalSliding
                                                     : MediaAttention::kDefault;
  m.target =
      Gemma4Model::Load(o.model, {.repack = !o.no_repack, .media_attention = media_attention});
  std::shared_ptr<const MmprojFile> mmproj;
  if (!o.mmproj.empty()) mmproj = MmprojFile::Open(o.mmproj);
  if (mmproj && mmproj->Has(Modality::kAudio)) {
    m.audio_encoder = Gemma4AudioEncoder::Load(mmproj);
    if (m.audio_encoder->n_embd_out() != m.target->n_embd()) {
      Fail(ErrorKind::kInvalidArgument, o.mmproj + ": the audio projector writes rows of " +
                                            std::to_string(m.audio_encoder->n_embd_out()) +
                                            " values, the model " + o.model + " takes " +
                                            std::to_string(m.target->n_embd()));
    }
    AudioInputOptions audio;
    audio.max_per_request = o.audio_max_count;
    audio.features.log_floor =
        o.audio_log_floor == "clamp" ? MelLogFloor::kClamp : MelLogFloor::kAdd;
    m.audio = std::make_unique<AudioInput>(*m.audio_encoder, audio);
  } else if (Given(app, "--audio-max-count") || Given(app, "--audio-log-floor")) {
    LogWarn("audio flags have no effect: no audio tower loaded (-mm/--mmproj with one)");
  }
  if (mmproj && mmproj->Has(Modality::kVision)) {
    VisionOptions vision;
    vision.gelu = o.vision_gelu == "quick"  ? VisionGelu::kQuick
                  : o.vision_gelu == "file" ? VisionGelu::kFromFile
                                            : VisionGelu::kTanh;
    m.vision = Gemma4VisionEncoder::Load(mmproj, vision);
    if (m.vision->n_embd_out() != m.target->n_embd()) {
      Fail(ErrorKind::kInvalidArgument,
           o.mmproj + ": the projector writes rows of " + std::to_string(m.vision->n_embd_out()) +
               " values, the model " + o.model + " takes " + std::to_string(m.target->n_embd()));
    }
    ImageInputOptions images;
    images.prepare.rule =
        o.image_resize == "llamacpp" ? ResizeRule::kLlamaCpp : ResizeRule::kBudget;
    images.prepare.budget_tokens = o.image_budget;
    images.prepare.min_tokens = o.image_min_tokens;
    images.prepare.max_tokens = o.image_max_tokens;
    images.max_per_request = o.image_max_count;
    if (o.image_min_tokens < 1 || o.image_min_tokens > o.image_max_tokens) {
      Fail(ErrorKind::kInvalidArgument,
           "--image-min-tokens and --image-max-tokens must satisfy 1 <= min <= max");
    }
    m.images = std::make_unique<ImageInput>(*m.vision, images);
  } else if (Given(app, "--image-attention") || Given(app, "--image-resize") ||
             Given(app, "--image-budget") || Given(app, "--image-min-tokens") ||
             Given(app, "--image-max-tokens") || Given(app, "--image-max-count") ||
             Given(app, "--vision-gelu")) {
    LogWarn("image flags have no effect: no vision tower loaded (-mm/--mmproj with one)");
  }
  m.packed_bytes += m.target->weights().PackedBytes();
  m.mapped_bytes = m.target->file().file_size();
  m.tokenizer = std::make_unique<Tokenizer>(LoadVocabFromGguf(m.target->file()));

  m.spec.draft_max = o.draft_max;
  m.spec.draft_min = o.draft_min;
  m.spec.draft_p_min = o.draft_p_min;
  m.spec.adaptive = !o.no_adaptive;
  m.spec.tree_width = o.draft_tree;
  m.spec.ngram_min = o.ngram_min;
  m.spec.ngram_max = o.ngram_max;
  m.suffix_index_bytes = o.suffix_mib << 20;
  const bool draft_flags = Given(app, "--draft-max") || Given(app, "--draft-min") ||
                           Given(app, "--draft-p-min") || Given(app, "--no-adaptive") ||
                           Given(app, "--draft-tree") || Given(app, "--draft-head");
  // "auto" is nullopt: the drafter of the model loaded (AutoSpecType).
  const std::optional<SpecType> asked = SpecTypeNamed(o.spec_type);
  if (o.model_draft.empty()) {
    if (asked && *asked != SpecType::kNone && DrafterEntryOf(*asked).model != DrafterModel::kNone) {
      Fail(ErrorKind::kInvalidArgument, "--spec-type " + o.spec_type + " needs -md/--model-draft");
    }
    m.spec.type = asked.value_or(AutoSpecType(DrafterModel::kNone));
    if (draft_flags && m.spec.type == SpecType::kNone) {
      LogWarn("draft flags have no effect: no drafter loaded (-md)");
    }
  } else {
    const DrafterModel loaded = DrafterModelOf(o.model_draft);
    if (asked) CheckDrafterModel(*asked, loaded, o.model_draft);
    if (loaded == DrafterModel::kAssistant) {
      const DraftHead head = o.draft_head == "dense"      ? DraftHead::kDense
                             : o.draft_head == "centroid" ? DraftHead::kCentroid
                                                          : DraftHead::kAuto;
      m.assistant = Gemma4Assistant::Load(o.model_draft, *m.target, head, {.repack = !o.no_repack});
      m.packed_bytes += m.assistant->weights().PackedBytes();
    } else {
      m.draft_model = Gemma4Model::Load(o.model_draft, {.repack = !o.no_repack});
      m.packed_bytes += m.draft_model->weights().PackedBytes();
    }
    // auto with an assistant: prompt lookup chained with it (the planner falls back to the
    // assistant alone, or plain decoding, where lookup does not pay).
    m.spec.type = asked.value_or(AutoSpecType(loaded));
    m.mapped_bytes += GgufFile::Open(o.model_draft)->file_size();
    if (m.spec.type == SpecType::kNone) {
      LogWarn(
          "an assistant is loaded but speculation is off (--spec-type none): drafting is "
          "not used");
      if (draft_flags) LogWarn("draft flags have no effect with --spec-type none");
    } else if (DrafterEntryOf(m.spec.type).model == DrafterModel::kNone) {
      LogWarn(std::string("a drafter is loaded (-md) but --spec-type ") +
              SpecTypeName(m.spec.type) + " does not use it");
    }
    if (m.spec.tree_width > 0 &&
        (m.spec.type == SpecType::kNone || !DrafterEntryOf(m.spec.type).trees)) {
      LogWarn("--draft-tree has no effect: --spec-type " + std::string(SpecTypeName(m.spec.type)) +
              " does not draft trees (" + DrafterNamesWhere(&DrafterEntry::trees) +
              " with an MTP assistant do)");
    }
    if (m.assistant && m.assistant->has_centroids() && !m.assistant->uses_centroids()) {
      LogWarn("the assistant's centroid head is present but not used (--draft-head dense)");
    }
  }
  m.load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

DrafterSet LoadedModels::Drafters() const {
  return MakeDrafters({*target, assistant.get(), draft_model.get(), *pool, suffix_index_bytes});
}

size_t ResidentBytes() {
  std::ifstream in("/proc/self/statm");
  size_t pages = 0, resident = 0;
  if (!(in >> pages >> resident)) return 0;
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace tandem::cli
