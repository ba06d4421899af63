// sapiens-cli: the headless front end. Sub-commands live in command_*.cpp and register themselves.

#include "cli_command.h"

#include "sapiens/common/allocator.h"
#include "sapiens/common/log.h"
#include "sapiens/common/threads.h"
#include "sapiens/common/version.h"

#include <c10/util/Exception.h>

#include <iostream>

namespace sapiens::cli {

CliCommand::CliCommand(std::string name, CommandSetup setup) {
  registeredCommands().push_back({std::move(name), std::move(setup)});
}

std::vector<RegisteredCommand>& registeredCommands() {
  static std::vector<RegisteredCommand> commands;
  return commands;
}

}  // namespace sapiens::cli

int main(int argc, char** argv) {
  using namespace sapiens;
  threads::ensureThreadPoolWaitPolicy(argc, argv);
  memory::keepLargeBlocksInHeap();

  CLI::App app{
      "sapiens-cli - Sapiens2 human-centric vision models (pose, body-part segmentation, surface "
      "normals, albedo, pointmaps) from the command line",
      "sapiens-cli"};
  app.require_subcommand(0, 1);
  bool showVersion = false;
  bool verbose = false;
  bool quiet = false;
  int numThreads = 0;
  app.add_flag("--version", showVersion, "Print the version and exit");
  app.add_flag("-v,--verbose", verbose, "Log debug messages");
  app.add_flag("-q,--quiet", quiet, "Log only errors");
  app.add_option("--threads", numThreads,
                 "CPU threads for inference (default: all cores, or $SAPIENS_NUM_THREADS)")
      ->check(CLI::NonNegativeNumber);

  std::vector<std::pair<CLI::App*, cli::CommandAction>> actions;
  for (auto& command : cli::registeredCommands()) {
    auto before = app.get_subcommands({}).size();
    cli::CommandAction action = command.setup(app);
    auto subs = app.get_subcommands({});
    if (subs.size() > before) actions.emplace_back(subs.back(), std::move(action));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version-like successes keep 0; every bad command line is kUsage, not CLI11's own codes.
    return app.exit(e) == 0 ? cli::kOk : cli::kUsage;
  }

  if (showVersion) {
    std::cout << "sapiens-cli " << versionString() << "\n";
    return cli::kOk;
  }

  log::Options logOptions;
  logOptions.console = quiet ? log::Level::Error : (verbose ? log::Level::Debug : log::Level::Info);
  log::init(logOptions);
  threads::configure(numThreads);

  for (auto& [sub, action] : actions) {
    if (sub->parsed()) {
      try {
        return action();
      } catch (const CLI::Error& e) {  // option values only checked once the command runs
        logger().error("{}", e.what());
        return cli::kUsage;
      } catch (const c10::Error& e) {  // LibTorch's own message, without its backtrace
        logger().error("{}", e.what_without_backtrace());
        return cli::kFailure;
      } catch (const std::exception& e) {
        logger().error("{}", e.what());
        return cli::kFailure;
      }
    }
  }
  std::cout << app.help();
  return cli::kUsage;
}
