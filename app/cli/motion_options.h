#pragma once
// The motion options shared by `run VIDEO --motion` and `motion POSE_JSON`: the filter's cutoff, the
// longest gap filled, the angles, and the per-track summary printed when the files are written.

#include "sapiens/run/motion_export.h"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <sstream>
#include <string>

namespace sapiens::cli {

struct MotionArgs {
  MotionExportOptions options;
  std::string angles;  ///< comma-separated
  bool noPlot = false;
};

inline void addMotionOptions(CLI::App* sub, const std::shared_ptr<MotionArgs>& m) {
  sub->add_option(
         "--cutoff", m->options.cutoffHz,
         "Motion: low-pass cutoff in Hz of the zero-phase Butterworth (order 4), below half the frame rate")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--max-gap", m->options.maxGapFrames,
                  "Motion: fill gaps of up to N frames; longer ones split the series")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--angles", m->angles,
                  "Motion: comma-separated joint angles of resources/data/joint_angles.json (default: all)");
  sub->add_flag("--no-plot", m->noPlot, "Motion: no STEM.trackN.angles.png");
}

inline MotionExportOptions motionOptions(const MotionArgs& m) {
  MotionExportOptions options = m.options;
  options.plots = !m.noPlot;
  std::stringstream list(m.angles);
  for (std::string name; std::getline(list, name, ',');)
    if (!name.empty()) options.angles.push_back(name);
  return options;
}

inline void printMotionSummary(const MotionExportSummary& summary) {
  for (const TrackMotionSummary& t : summary.tracks) {
    if (!t.error.empty()) {
      std::cerr << fmt::format("motion: track {}: no files: {}\n", t.trackId, t.error);
      continue;
    }
    std::cout << fmt::format("motion: track {}: {} samples over {:.2f} s, {} segment(s), {} file(s)\n",
                             t.trackId, t.samples, t.durationSeconds, t.segments.count, t.files.size());
    for (const std::string& warning : t.warnings)
      std::cerr << fmt::format("motion: track {}: {}\n", t.trackId, warning);
  }
}

}  // namespace sapiens::cli
