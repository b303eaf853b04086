// tandem: subcommand dispatch. Errors from any layer end here as one clear line and exit code 1.
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "base/error.h"
#include "cli/commands.h"

namespace {

// llama.cpp's multi-letter single-dash flags, which CLI11 cannot declare, and their long names.
constexpr const char* kShortAliases[][2] = {
    {"-md", "--model-draft"},   {"-mm", "--mmproj"},   {"-ctk", "--cache-type-k"},
    {"-ctv", "--cache-type-v"}, {"-np", "--parallel"},
};

std::vector<std::string> NormalizeArgs(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& a : args) {
    for (const auto& alias : kShortAliases) {
      if (a == alias[0]) a = alias[1];
    }
  }
  return args;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tandem: Gemma 4 inference with MTP assistant drafting"};
  app.require_subcommand(1);
  tandem::cli::CommandRunner runner;
  tandem::cli::AddInspectCommand(app, runner);
  tandem::cli::AddTokenizeCommands(app, runner);
  tandem::cli::AddMkmodelCommand(app, runner);
  tandem::cli::AddRunCommand(app, runner);
  tandem::cli::AddTranscribeCommand(app, runner);
  tandem::cli::AddBenchCommand(app, runner);
#ifdef TANDEM_HAVE_SERVER
  tandem::cli::AddServeCommand(app, runner);
#endif
#ifdef TANDEM_HAVE_CONVERT
  tandem::cli::AddConvertCommand(app, runner);
  tandem::cli::AddQuantizeCommand(app, runner);
#endif
  try {
    std::vector<std::string> args = NormalizeArgs(argc, argv);
    std::vector<char*> ptrs;
    for (std::string& a : args) ptrs.push_back(a.data());
    app.parse(static_cast<int>(ptrs.size()), ptrs.data());
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return runner ? runner() : 0;
  } catch (const tandem::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
