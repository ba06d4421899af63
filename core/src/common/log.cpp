#include "sapiens/common/log.h"

#include "sapiens/common/paths.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

namespace sapiens::log {
namespace {

spdlog::level::level_enum toSpd(Level level) {
  switch (level) {
    case Level::Trace:
      return spdlog::level::trace;
    case Level::Debug:
      return spdlog::level::debug;
    case Level::Info:
      return spdlog::level::info;
    case Level::Warn:
      return spdlog::level::warn;
    case Level::Error:
      return spdlog::level::err;
    case Level::Off:
      return spdlog::level::off;
  }
  return spdlog::level::info;
}

Level fromSpd(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return Level::Trace;
    case spdlog::level::debug:
      return Level::Debug;
    case spdlog::level::info:
      return Level::Info;
    case spdlog::level::warn:
      return Level::Warn;
    case spdlog::level::err:
    case spdlog::level::critical:
      return Level::Error;
    default:
      return Level::Off;
  }
}

// Forwards formatted messages to the callbacks registered by front ends.
class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  int add(Callback callback) {
    std::lock_guard<std::mutex> lock(callbacksMutex_);
    callbacks_.emplace(++lastId_, std::move(callback));
    return lastId_;
  }
  void remove(int id) {
    std::lock_guard<std::mutex> lock(callbacksMutex_);
    callbacks_.erase(id);
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::map<int, Callback> callbacks;
    {
      std::lock_guard<std::mutex> lock(callbacksMutex_);
      if (callbacks_.empty()) return;
      callbacks = callbacks_;
    }
    const std::string_view text(msg.payload.data(), msg.payload.size());
    for (auto& [id, callback] : callbacks) callback(fromSpd(msg.level), text);
  }
  void flush_() override {}

 private:
  std::mutex callbacksMutex_;
  std::map<int, Callback> callbacks_;
  int lastId_ = 0;
};

struct State {
  std::mutex mutex;
  std::shared_ptr<spdlog::logger> logger;
  std::shared_ptr<spdlog::sinks::stderr_color_sink_mt> console;
  std::shared_ptr<CallbackSink> callbacks = std::make_shared<CallbackSink>();
  std::string filePath;
};

State& state() {
  static State s;
  return s;
}

std::shared_ptr<spdlog::logger> makeDefaultLogger(State& s) {
  s.console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  s.console->set_level(spdlog::level::info);
  s.callbacks->set_level(spdlog::level::debug);
  auto logger = std::make_shared<spdlog::logger>("sapiens", spdlog::sinks_init_list{s.console, s.callbacks});
  logger->set_level(spdlog::level::debug);
  logger->set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");
  return logger;
}

}  // namespace

std::string logDirectory() {
  if (const char* dir = std::getenv("SAPIENS_LOG_DIR"); dir && *dir) return dir;
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state)
    return std::string(state) + "/sapiens2-studio/logs";
  return paths::userDataDir() + "/logs";
}

void init(const Options& options) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto logger = makeDefaultLogger(s);
  s.console->set_level(toSpd(options.console));
  s.filePath.clear();
  if (options.file) {
    const std::string dir = options.directory.empty() ? logDirectory() : options.directory;
    try {
      std::filesystem::create_directories(dir);
      const std::string path = dir + "/sapiens.log";
      auto file = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(path, 5 * 1024 * 1024, 3);
      file->set_level(spdlog::level::debug);
      file->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [%l] [t%t] %v");
      logger->sinks().push_back(file);
      s.filePath = path;
    } catch (const std::exception& e) {
      logger->warn("log file disabled: cannot write under {}: {}", dir, e.what());
    }
  }
  logger->flush_on(spdlog::level::warn);
  s.logger = logger;
}

void setConsoleLevel(Level level) {
  logger();  // make sure the default sinks exist
  std::lock_guard<std::mutex> lock(state().mutex);
  state().console->set_level(toSpd(level));
}

std::string logFilePath() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().filePath;
}

int addCallback(Callback callback) {
  logger();
  return state().callbacks->add(std::move(callback));
}

void removeCallback(int id) {
  state().callbacks->remove(id);
}

std::string_view levelName(Level level) {
  switch (level) {
    case Level::Trace:
      return "trace";
    case Level::Debug:
      return "debug";
    case Level::Info:
      return "info";
    case Level::Warn:
      return "warning";
    case Level::Error:
      return "error";
    case Level::Off:
      return "off";
  }
  return "info";
}

}  // namespace sapiens::log

namespace sapiens {

spdlog::logger& logger() {
  auto& s = log::state();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (!s.logger) s.logger = log::makeDefaultLogger(s);
  return *s.logger;
}

}  // namespace sapiens
