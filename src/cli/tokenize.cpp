// `tandem tokenize` / `tandem detokenize`: placeholder until the tokenizer lands.
#include "cli/commands.h"

namespace tandem::cli {

void AddTokenizeCommands(CLI::App&, CommandRunner&) {}

}  // namespace tandem::cli
