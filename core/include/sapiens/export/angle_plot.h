#pragma once
// A track's joint angles over time as one picture (STEM.trackN.angles.png): a panel per angle, the raw
// curve in grey under the filtered one, time in seconds along the bottom, each panel's range on its left.
// NaN leaves a gap in a curve.

#include "sapiens/motion/motion_tables.h"

#include <opencv2/core/mat.hpp>

#include <string>

namespace sapiens {

/// The plot as a BGR picture, `columns` panels wide. `raw` and `filtered` have the same names and times
/// (raw may be empty). Throws std::invalid_argument when they do not match or there is nothing to plot.
cv::Mat angleTrackPlot(const motion::AngleTable& raw, const motion::AngleTable& filtered,
                       const std::string& title, int columns = 2);

/// angleTrackPlot written as a PNG, atomically; errors are ExportError naming the file.
void writeAngleTrackPlot(const std::string& path, const motion::AngleTable& raw,
                         const motion::AngleTable& filtered, const std::string& title);

}  // namespace sapiens
