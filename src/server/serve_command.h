// Transitional: declares `tandem serve`'s registration (defined in src/cli/serve.cpp) for
// src/cli/main.cpp until src/cli/commands.h declares it; src/server/CMakeLists.txt force-includes
// this header into the tandem binary only while commands.h lacks the declaration.
#pragma once

#include <functional>

namespace CLI {
class App;
}  // namespace CLI

namespace tandem::cli {

using CommandRunner = std::function<int()>;
void AddServeCommand(CLI::App& app, CommandRunner& runner);

}  // namespace tandem::cli
