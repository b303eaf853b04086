// `tandem convert`: a Hugging Face Gemma 4 checkpoint directory to a GGUF file.
// Compiled into the binary only with the conversion library (TANDEM_HAVE_CONVERT).
#ifdef TANDEM_HAVE_CONVERT

#include <cstdio>
#include <memory>
#include <string>

#include "base/error.h"
#include "cli/commands.h"
#include "convert/converter.h"
#include "convert/progress_bar.h"

namespace tandem::cli {

void AddConvertCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub = app.add_subcommand(
      "convert",
      "Convert a Hugging Face Gemma 4 checkpoint (target or MTP assistant) to GGUF; with "
      "--mmproj, also its vision and audio towers as a llama.cpp mmproj GGUF");
  struct Args {
    std::string input;
    std::string output;
    std::string type = "f16";
    std::string name;
    std::string mmproj;
    bool clip_use_gelu = false;
    int threads = 0;
    bool no_progress = false;
  };
  auto args = std::make_shared<Args>();
  sub->add_option("HF_DIR", args->input,
                  "Checkpoint directory: config.json, *.safetensors, tokenizer.json")
      ->required();
  sub->add_option("-o,--output", args->output, "Output GGUF path")->required();
  sub->add_option("--type,--outtype", args->type, "Weight type: f32, f16, bf16 or q8_0")
      ->check(CLI::IsMember({"f32", "f16", "bf16", "q8_0"}, CLI::ignore_case))
      ->capture_default_str();
  sub->add_option("--mmproj", args->mmproj,
                  "Also write the vision tower (Gemma4ForConditionalGeneration only) and, for "
                  "E2B/E4B, the audio tower to this mmproj GGUF (general.architecture clip, "
                  "projectors gemma4v and gemma4a), in llama.cpp's layout and dtype rules for "
                  "--type");
  sub->add_flag(
      "--clip-use-gelu", args->clip_use_gelu,
      "With --mmproj: also write clip.use_gelu = true, so llama.cpp runs the tanh GELU "
      "of the checkpoint instead of GELU-quick (llama.cpp's converter does not write it)");
  sub->add_option("--name", args->name, "general.name (default: the directory's name)");
  sub->add_option("-t,--threads", args->threads, "Threads (default: physical cores)");
  sub->add_flag("--no-progress", args->no_progress, "Do not draw a progress bar");
  sub->callback([&runner, args] {
    runner = [args] {
      ConvertOptions options;
      options.input_dir = args->input;
      options.output_path = args->output;
      options.out_type = *ParseTensorTypeName(args->type);  // checked by IsMember
      options.name = args->name;
      options.n_threads = args->threads;
      options.progress = !args->no_progress;
      options.mmproj_path = args->mmproj;
      options.clip_use_gelu = args->clip_use_gelu;
      const ConvertSummary s = ConvertHfToGguf(options);
      std::printf("wrote %s: %s (%s, %zu shard%s) -> arch %s, %zu tensors, %s of %s weights\n",
                  args->output.c_str(), args->input.c_str(), s.hf_architecture.c_str(), s.n_shards,
                  s.n_shards == 1 ? "" : "s", s.gguf_arch.c_str(), s.n_tensors,
                  FormatBytes(s.tensor_bytes).c_str(), args->type.c_str());
      if (!args->mmproj.empty()) {
        std::printf(
            "wrote %s: %s, %zu tensors, %s\n", args->mmproj.c_str(),
            s.n_mmproj_audio_tensors > 0 ? "vision gemma4v, audio gemma4a" : "vision gemma4v",
            s.n_mmproj_tensors, FormatBytes(s.mmproj_bytes).c_str());
      }
      return 0;
    };
  });
}

}  // namespace tandem::cli

#endif  // TANDEM_HAVE_CONVERT
