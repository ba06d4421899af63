#pragma once
// A stand-in for a camera: numbered frames produced in real time on its own clock. Like a camera's
// driver it keeps only the newest picture, so a consumer that pulls too slowly gets the latest frame and
// the ones in between are dropped and counted. Each frame carries its number in its pixels
// (frame_number_pattern.h).

#include "sapiens/media/frame_source.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace sapiens {

struct SyntheticLiveOptions {
  int width = 160;
  int height = 120;
  double fps = 30;
  std::int64_t frameLimit = -1;   ///< the stream ends after producing this many frames; -1: never
  std::int64_t failAtFrame = -1;  ///< next() throws MediaError (as an unplugged camera) once this frame is
                                  ///< due; -1: never
};

/// The name that opens a synthetic camera through openFrameSource: "synthetic:" followed by an optional
/// "WIDTHxHEIGHT" and "@FPS", e.g. "synthetic:", "synthetic:640x480", "synthetic:640x480@15". A test
/// pattern for checking the live path without a camera.
inline constexpr std::string_view kSyntheticSourcePrefix = "synthetic:";

/// The options `name` asks for, nullopt when it does not start with kSyntheticSourcePrefix. Throws
/// MediaError naming `name` when the rest is malformed or out of range.
std::optional<SyntheticLiveOptions> parseSyntheticSourceName(const std::string& name);

class SyntheticLiveSource : public FrameSource {
 public:
  explicit SyntheticLiveSource(const SyntheticLiveOptions& options = {});

  const SourceInfo& info() const override { return info_; }
  /// Waits for the next frame the clock produces (the first one is produced at construction). When
  /// several were produced since the last call, returns the newest and counts the others as dropped.
  /// Frame i has timestamp i / fps.
  std::optional<Frame> next() override;
  /// Ends the stream; a next() waiting on another thread returns nullopt at once.
  void close() override;

  /// Frames produced and never handed out, so far. Safe to read from any thread.
  std::int64_t droppedFrames() const { return dropped_.load(); }

 private:
  SyntheticLiveOptions options_;
  SourceInfo info_;
  std::chrono::steady_clock::time_point start_;
  std::int64_t lastDelivered_ = -1;
  std::atomic<std::int64_t> dropped_{0};
  std::mutex mutex_;
  std::condition_variable closedSignal_;
  bool closed_ = false;
};

}  // namespace sapiens
