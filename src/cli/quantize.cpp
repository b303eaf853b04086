// `tandem quantize`: rewrites a GGUF's weights in a llama-quantize preset (Q4_K_M, Q8_0, ...).
// Compiled into the binary only with the conversion library (TANDEM_HAVE_CONVERT).
#ifdef TANDEM_HAVE_CONVERT

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"
#include "convert/quantizer.h"

namespace tandem::cli {

void AddQuantizeCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub = app.add_subcommand("quantize", "Quantize a GGUF with llama-quantize's type mix");
  struct Args {
    std::string input;
    std::string output;
    std::string type;
    std::vector<std::string> keep;
    int threads = 0;
    bool allow_requantize = false;
    bool no_progress = false;
  };
  auto args = std::make_shared<Args>();
  std::string presets;
  for (const QuantPresetInfo& p : QuantPresets()) {
    presets += (presets.empty() ? "" : ", ") + std::string(p.name);
  }
  sub->add_option("INPUT", args->input, "Input GGUF")->required();
  sub->add_option("OUTPUT", args->output, "Output GGUF")->required();
  sub->add_option("TYPE", args->type, "Preset: " + presets)->required();
  sub->add_option("--keep-type", args->keep,
                  "Keep this tensor's type (exact GGUF name; repeatable)");
  sub->add_option("-t,--threads", args->threads, "Threads (default: physical cores)");
  sub->add_flag("--allow-requantize", args->allow_requantize,
                "Accept inputs that are already quantized (loses precision)");
  sub->add_flag("--no-progress", args->no_progress, "Do not draw a progress bar");
  sub->callback([&runner, args, presets] {
    runner = [args, presets] {
      auto preset = ParseQuantPreset(args->type);
      if (!preset) {
        Fail(ErrorKind::kInvalidArgument,
             "unknown quantization type '" + args->type + "' (valid: " + presets + ")");
      }
      QuantizeOptions options;
      options.preset = *preset;
      options.keep_types = args->keep;
      options.n_threads = args->threads;
      options.allow_requantize = args->allow_requantize;
      options.progress = !args->no_progress;
      const QuantizeSummary s = QuantizeGguf(args->input, args->output, options);
      std::printf("wrote %s (%s): %zu tensors, %zu converted; %s\n", args->output.c_str(),
                  std::string(GetQuantPresetInfo(*preset).name).c_str(), s.n_tensors, s.n_converted,
                  FormatQuantizeSummary(s).c_str());
      return 0;
    };
  });
}

}  // namespace tandem::cli

#endif  // TANDEM_HAVE_CONVERT
