// `tandem mkmodel`: writes a random-weight Gemma 4 GGUF for a named config (fixtures, benchmarks):
// the text model, its MTP assistant (--assistant) or its multimodal projector (--mmproj: the
// vision tower, and the audio tower for the configs that have one).
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "base/error.h"
#include "cli/commands.h"
#include "encoders/gemma4a/presets.h"
#include "encoders/gemma4v/presets.h"
#include "encoders/random_mmproj.h"
#include "model/gemma4/presets.h"
#include "model/gemma4/random_model.h"

namespace tandem::cli {

void AddMkmodelCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub =
      app.add_subcommand("mkmodel", "Write a random-weight Gemma 4 GGUF for a named config");
  struct Args {
    std::string config = "tiny-e2b";
    std::string output;
    std::string type = "f32";
    uint64_t seed = 1234;
    bool assistant = false;
    bool mmproj = false;
    bool clip_use_gelu = false;
    bool no_clamps = false;
    int projection_dim = 0;
    std::string centroids = "auto";
    float echo_epsilon = -1.0f;
    float echo_pair_spread = -1.0f;
  };
  auto args = std::make_shared<Args>();
  std::string names;
  for (const auto& n : Gemma4PresetNames()) names += (names.empty() ? "" : ", ") + n;
  sub->add_option("--config", args->config, "Model config: " + names)->capture_default_str();
  sub->add_option("-o,--output", args->output, "Output GGUF path")->required();
  sub->add_option("--type", args->type, "Weight type (f32, f16, bf16, q8_0, q4_0, q4_K, ...)")
      ->capture_default_str();
  sub->add_option("--seed", args->seed, "Random seed")->capture_default_str();
  sub->add_flag("--assistant", args->assistant,
                "Write the MTP assistant (gemma4-assistant) for the config instead of the target");
  sub->add_flag("--mmproj", args->mmproj,
                "Write the config's multimodal projector (a llama.cpp mmproj GGUF) instead of the "
                "text model: the vision tower (gemma4v) and, for e2b, e4b, tiny, tiny-e2b and "
                "tiny-e4b, the audio tower (gemma4a) in the same file; configs: e2b, e4b, "
                "26b-a4b, 31b, tiny, tiny-*");
  sub->add_flag(
      "--clip-use-gelu", args->clip_use_gelu,
      "With --mmproj: also write clip.use_gelu = true, so llama.cpp runs the tanh GELU "
      "of the checkpoint instead of GELU-quick (llama.cpp's converter does not write it)");
  sub->add_flag("--no-clamps", args->no_clamps,
                "With --mmproj: no clamp bounds on the vision and audio linears (as the 26B/31B "
                "vision towers), "
                "for comparisons with llama.cpp, whose clamped linears differ (tests/node/"
                "server_images_llamacpp.test.mjs)");
  sub->add_option("--projection-dim", args->projection_dim,
                  "With --mmproj: the text width the towers project into (default: the config's "
                  "text model), to match another text model");
  sub->add_option("--centroids", args->centroids,
                  "Assistant centroid head: on, off, auto (on for e2b/e4b shapes)")
      ->check(CLI::IsMember({"on", "off", "auto"}))
      ->capture_default_str();
  sub->add_option("--echo-epsilon", args->echo_epsilon,
                  "Acceptance knob for speculative benchmarks: the target echoes its input with "
                  "post-branch norms scaled by this; the assistant repeats its input token "
                  "(the same value for both unless a benchmark's recipe says otherwise; 0 = "
                  "~100% acceptance)");
  sub->add_option("--echo-pair-spread", args->echo_pair_spread,
                  "With --echo-epsilon, for draft-tree benchmarks: token embeddings come in pairs "
                  "(row 2k+1 = row 2k + this x a random row), so the target mostly echoes one "
                  "token of its input's pair and the assistant's runner-up is often the one it "
                  "chose (the same value for both; bench/README.md gives the epsilons that do "
                  "this at E2B shapes)");
  sub->callback([&runner, args] {
    runner = [args] {
      auto type = ParseTensorTypeName(args->type);
      if (!type) Fail(ErrorKind::kInvalidArgument, "unknown weight type '" + args->type + "'");
      RandomModelOptions options;
      options.seed = args->seed;
      options.echo_epsilon = args->echo_epsilon;
      options.echo_pair_spread = args->echo_pair_spread;
      if (args->echo_pair_spread >= 0 && (args->echo_epsilon < 0 || args->mmproj)) {
        Fail(ErrorKind::kInvalidArgument,
             "mkmodel: --echo-pair-spread needs --echo-epsilon and a text model");
      }
      options.weight_type = *type;
      options.name = "tandem random " + args->config + (args->assistant ? " assistant" : "");
      if (args->assistant && args->mmproj) {
        Fail(ErrorKind::kInvalidArgument, "mkmodel: --assistant and --mmproj exclude each other");
      }
      if (args->clip_use_gelu && !args->mmproj) {
        Fail(ErrorKind::kInvalidArgument, "mkmodel: --clip-use-gelu needs --mmproj");
      }
      if (args->no_clamps && !args->mmproj) {
        Fail(ErrorKind::kInvalidArgument, "mkmodel: --no-clamps needs --mmproj");
      }
      if (args->projection_dim != 0 && (!args->mmproj || args->projection_dim < 0)) {
        Fail(ErrorKind::kInvalidArgument,
             "mkmodel: --projection-dim needs --mmproj and a width > 0");
      }
      if (args->mmproj) {
        Gemma4VisionConfig vision = Gemma4VisionPreset(args->config);
        // The projection's width is the text model's: take it from the text preset of the same
        // name where there is one.
        for (const auto& n : Gemma4PresetNames()) {
          if (n == args->config) vision.n_embd_text = Gemma4Preset(n).n_embd;
        }
        if (args->projection_dim > 0) vision.n_embd_text = args->projection_dim;
        if (args->clip_use_gelu) vision.use_gelu = true;
        if (args->no_clamps) vision.clipped_linears = false;
        // The E-series checkpoints have an audio tower too, written into the same file as
        // llama.cpp's converter does.
        std::optional<Gemma4AudioConfig> audio;
        if (HasGemma4AudioPreset(args->config)) {
          audio = Gemma4AudioPreset(args->config);
          audio->n_embd_text = vision.n_embd_text;
          if (args->no_clamps) audio->clipped_linears = false;
        }
        RandomMmprojOptions mm;
        mm.seed = args->seed;
        mm.weight_type = *type;
        mm.name = "tandem random " + args->config + " mmproj";
        WriteRandomMmproj(&vision, audio ? &*audio : nullptr, mm, args->output);
      } else if (args->assistant) {
        const bool e_series = args->config.find("e2b") != std::string::npos ||
                              args->config.find("e4b") != std::string::npos;
        // The echo drafter scores against the target's embedding through its dense head.
        const bool centroids = args->centroids == "on" ||
                               (args->centroids == "auto" && e_series && args->echo_epsilon < 0);
        WriteRandomGemma4Assistant(Gemma4AssistantPreset(args->config, centroids), options,
                                   args->output);
      } else {
        WriteRandomGemma4(Gemma4Preset(args->config), options, args->output);
      }
      std::printf("wrote %s (%s, %s weights, seed %llu)\n", args->output.c_str(),
                  args->config.c_str(), args->type.c_str(),
                  static_cast<unsigned long long>(args->seed));
      return 0;
    };
  });
}

}  // namespace tandem::cli
