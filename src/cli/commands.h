// The subcommands of the `tandem` binary. Each file adds one to the app; main runs the chosen one.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace tandem::cli {

// Set by a subcommand's callback when it is selected; returns the process exit code.
using CommandRunner = std::function<int()>;

void AddInspectCommand(CLI::App& app, CommandRunner& runner);     // inspect.cpp
void AddTokenizeCommands(CLI::App& app, CommandRunner& runner);   // tokenize.cpp
void AddMkmodelCommand(CLI::App& app, CommandRunner& runner);     // mkmodel.cpp
void AddRunCommand(CLI::App& app, CommandRunner& runner);         // run.cpp
void AddTranscribeCommand(CLI::App& app, CommandRunner& runner);  // transcribe.cpp
void AddBenchCommand(CLI::App& app, CommandRunner& runner);       // bench.cpp
void AddServeCommand(CLI::App& app, CommandRunner& runner);       // serve.cpp
void AddConvertCommand(CLI::App& app, CommandRunner& runner);     // convert.cpp
void AddQuantizeCommand(CLI::App& app, CommandRunner& runner);    // quantize.cpp

}  // namespace tandem::cli
