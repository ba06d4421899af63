#pragma once
// The one logging set-up of the project: a console sink (stderr), a rotating file in the user's data
// folder, and callback sinks that front ends (the GUI's log panel) attach to. Everything in core logs
// through sapiens::logger().

#include <spdlog/spdlog.h>

#include <functional>
#include <string>
#include <string_view>

namespace sapiens::log {

enum class Level { Trace, Debug, Info, Warn, Error, Off };

struct Options {
  Level console = Level::Info;
  bool file = true;       ///< rotating file under logDirectory()
  std::string directory;  ///< overrides logDirectory() when not empty
};

/// Sets up the sinks. Safe to call again (the sinks are replaced); until it is called, logging goes
/// to stderr at Info.
void init(const Options& options);
void setConsoleLevel(Level level);
/// $XDG_STATE_HOME or $XDG_DATA_HOME or ~/.local/share, + "/sapiens2-studio/logs".
std::string logDirectory();
/// Path of the current log file, empty when file logging is off or failed.
std::string logFilePath();

using Callback = std::function<void(Level level, std::string_view message)>;
/// Receives every message at Debug and above, from any thread. Returns an id for removeCallback.
int addCallback(Callback callback);
void removeCallback(int id);

std::string_view levelName(Level level);

}  // namespace sapiens::log

namespace sapiens {
/// The project's logger ("sapiens").
spdlog::logger& logger();
}  // namespace sapiens
