#pragma once
// Sub-commands register themselves: each command_*.cpp defines a static CliCommand whose setup
// function adds a CLI11 sub-command and returns what to run when it is chosen.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace sapiens::cli {

/// Runs the chosen sub-command; returns the process exit code.
using CommandAction = std::function<int()>;
using CommandSetup = std::function<CommandAction(CLI::App& parent)>;

struct CliCommand {
  CliCommand(std::string name, CommandSetup setup);
};

struct RegisteredCommand {
  std::string name;
  CommandSetup setup;
};
std::vector<RegisteredCommand>& registeredCommands();

/// Exit codes shared by every sub-command.
enum ExitCode : int {
  kOk = 0,
  kFailure = 1,      ///< the work failed (bad file, bad model, I/O error)
  kUsage = 2,        ///< bad command line
  kPartial = 3,      ///< a batch finished but some inputs failed
  kEnvironment = 4,  ///< the machine is not set up right (doctor)
};

}  // namespace sapiens::cli
