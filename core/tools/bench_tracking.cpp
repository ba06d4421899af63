// sapiens-bench-tracking [--people N] [--frames F]: PersonTracker::assign on F frames (default 2000) of N
// people (default 10) walking about a 1920x1080 picture with 308 keypoints each, some missing from
// frames now and then. Prints the median, 99th percentile and largest time per frame, and the same as
// a ratio to the frame's floor: one pass over its poses (copying them, what any consumer of the frame
// does at least). Figures: docs/PERFORMANCE.md.

#include "sapiens/pipeline/person_tracker.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct Walker {
  double x, y, vx, vy;
};

sapiens::PoseInstance poseOf(const Walker& w, std::mt19937& random) {
  std::normal_distribution<double> jitter(0.0, 2.0);
  sapiens::PoseInstance pose;
  pose.bbox = {static_cast<float>(w.x - 60), static_cast<float>(w.y - 150), static_cast<float>(w.x + 60),
               static_cast<float>(w.y + 150)};
  for (int k = 0; k < 308; ++k) {
    pose.keypoints.push_back({w.x + ((k * 37) % 100 - 50) * 1.1 + jitter(random),
                              w.y + ((k * 61) % 100 - 50) * 2.9 + jitter(random)});
    pose.scores.push_back(0.8f);
  }
  return pose;
}

}  // namespace

int main(int argc, char** argv) {
  int people = 10, frames = 2000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--people") == 0) people = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--frames") == 0) frames = std::atoi(argv[i + 1]);
  }
  std::mt19937 random(3);
  std::uniform_real_distribution<double> across(100, 1820), down(200, 880), speed(-8, 8), chance(0, 1);
  std::vector<Walker> walkers;
  for (int p = 0; p < people; ++p)
    walkers.push_back({across(random), down(random), speed(random), speed(random)});

  sapiens::PersonTracker tracker;
  std::vector<double> trackMs, floorMs;
  for (int f = 0; f < frames; ++f) {
    sapiens::FrameResult frame;
    for (Walker& w : walkers) {
      w.x += w.vx, w.y += w.vy;
      if (w.x < 60 || w.x > 1860) w.vx = -w.vx;
      if (w.y < 150 || w.y > 930) w.vy = -w.vy;
      if (chance(random) > 0.03) frame.poses.push_back(poseOf(w, random));  // a missed detection now and then
    }
    const auto copyStart = Clock::now();
    sapiens::FrameResult copy = frame;
    floorMs.push_back(millisecondsSince(copyStart));
    const auto start = Clock::now();
    tracker.assign(copy);
    trackMs.push_back(millisecondsSince(start));
  }
  const auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
  };
  const double median = quantile(trackMs, 0.5), p99 = quantile(trackMs, 0.99), worst = quantile(trackMs, 1.0);
  const double floor = quantile(floorMs, 0.5);
  fmt::print("{} people, {} frames: tracking per frame median {:.3f} ms, p99 {:.3f} ms, max {:.3f} ms\n",
             people, frames, median, p99, worst);
  fmt::print("floor (copying the frame's poses) median {:.4f} ms: tracking = {:.1f}x the floor\n", floor,
             median / std::max(floor, 1e-9));
  fmt::print("tracks started {} (people {}), alive {}\n", tracker.tracksStarted(), people,
             tracker.tracksAlive());
  return 0;
}
