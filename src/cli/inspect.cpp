// `tandem inspect FILE.gguf`: placeholder until the GGUF reader lands.
#include "cli/commands.h"

namespace tandem::cli {

void AddInspectCommand(CLI::App& app, CommandRunner& runner) {
  auto* sub = app.add_subcommand("inspect", "Print a GGUF file's metadata and tensor table");
  sub->callback([&runner] { runner = [] { return 0; }; });
}

}  // namespace tandem::cli
