// tandem: subcommand dispatch. Errors from any layer end here as one clear line and exit code 1.
#include <cstdio>
#include <exception>

#include "base/error.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tandem: Gemma 4 inference with MTP assistant drafting"};
  app.require_subcommand(1);
  tandem::cli::CommandRunner runner;
  tandem::cli::AddInspectCommand(app, runner);
  tandem::cli::AddTokenizeCommands(app, runner);
  try {
    app.parse(argc, argv);
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
