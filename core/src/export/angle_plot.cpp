#include "sapiens/export/angle_plot.h"

#include "sapiens/export/image_file.h"
#include "sapiens/io/export_error.h"

#include <fmt/format.h>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace sapiens {

namespace {

constexpr int kPanelWidth = 560;
constexpr int kPanelHeight = 120;
constexpr int kMarginLeft = 56;
constexpr int kMarginBottom = 22;
constexpr int kTitleHeight = 34;
const cv::Scalar kBackground(255, 255, 255), kAxis(90, 90, 90), kRaw(190, 190, 190), kFiltered(180, 90, 20);

struct Range {
  double lo = std::numeric_limits<double>::max(), hi = std::numeric_limits<double>::lowest();
  void include(double v) {
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

void drawCurve(cv::Mat& panel, const motion::AngleTable& table, std::size_t column, const Range& time,
               const Range& value, const cv::Scalar& colour, int thickness) {
  const cv::Rect plot(kMarginLeft, 6, panel.cols - kMarginLeft - 8, panel.rows - 6 - kMarginBottom);
  const auto at = [&](std::size_t r) {
    const double tx = (table.times.seconds[r] - time.lo) / std::max(1e-9, time.hi - time.lo);
    const double vy = (table.rows[r][column] - value.lo) / std::max(1e-9, value.hi - value.lo);
    return cv::Point(plot.x + int(std::lround(tx * plot.width)),
                     plot.y + plot.height - int(std::lround(vy * plot.height)));
  };
  for (std::size_t r = 1; r < table.rows.size(); ++r) {
    if (std::isfinite(table.rows[r - 1][column]) && std::isfinite(table.rows[r][column]))
      cv::line(panel, at(r - 1), at(r), colour, thickness, cv::LINE_AA);
  }
}

void drawText(cv::Mat& picture, const std::string& text, cv::Point at, double scale = 0.4) {
  cv::putText(picture, text, at, cv::FONT_HERSHEY_SIMPLEX, scale, kAxis, 1, cv::LINE_AA);
}

cv::Mat anglePanel(const motion::AngleTable& raw, const motion::AngleTable& filtered, std::size_t column,
                   const Range& time) {
  cv::Mat panel(kPanelHeight, kPanelWidth, CV_8UC3, kBackground);
  Range value;
  for (const auto& row : filtered.rows) value.include(row[column]);
  for (const auto& row : raw.rows) value.include(row[column]);
  const cv::Rect plot(kMarginLeft, 6, panel.cols - kMarginLeft - 8, panel.rows - 6 - kMarginBottom);
  cv::rectangle(panel, plot, kAxis, 1);
  drawText(panel, filtered.names[column], {plot.x + 6, plot.y + 14}, 0.42);
  if (value.empty()) {
    drawText(panel, "no value", {plot.x + plot.width / 2 - 30, plot.y + plot.height / 2});
    return panel;
  }
  drawText(panel, fmt::format("{:.0f}", value.hi), {4, plot.y + 10});
  drawText(panel, fmt::format("{:.0f}", value.lo), {4, plot.y + plot.height});
  drawText(panel, fmt::format("{:.1f} s", time.lo), {plot.x, panel.rows - 6});
  drawText(panel, fmt::format("{:.1f} s", time.hi), {plot.x + plot.width - 40, panel.rows - 6});
  if (!raw.rows.empty()) drawCurve(panel, raw, column, time, value, kRaw, 1);
  drawCurve(panel, filtered, column, time, value, kFiltered, 2);
  return panel;
}

void checkTables(const motion::AngleTable& raw, const motion::AngleTable& filtered) {
  if (filtered.names.empty() || filtered.rows.size() < 2)
    throw std::invalid_argument("angle plot: nothing to plot (no angle, or fewer than two samples)");
  if (!raw.rows.empty() && (raw.names != filtered.names || raw.rows.size() != filtered.rows.size()))
    throw std::invalid_argument("angle plot: the raw and filtered tables differ in angles or samples");
  for (const auto& row : filtered.rows)
    if (row.size() != filtered.names.size())
      throw std::invalid_argument("angle plot: a row has " + std::to_string(row.size()) + " values for " +
                                  std::to_string(filtered.names.size()) + " angles");
}

}  // namespace

cv::Mat angleTrackPlot(const motion::AngleTable& raw, const motion::AngleTable& filtered,
                       const std::string& title, int columns) {
  checkTables(raw, filtered);
  columns = std::max(1, columns);
  Range time;
  for (const double t : filtered.times.seconds) time.include(t);
  const int count = static_cast<int>(filtered.names.size());
  const int rows = (count + columns - 1) / columns;
  cv::Mat picture(kTitleHeight + rows * kPanelHeight, columns * kPanelWidth, CV_8UC3, kBackground);
  drawText(picture, title, {10, 22}, 0.6);
  for (int i = 0; i < count; ++i) {
    const cv::Rect where((i % columns) * kPanelWidth, kTitleHeight + (i / columns) * kPanelHeight,
                         kPanelWidth, kPanelHeight);
    anglePanel(raw, filtered, static_cast<std::size_t>(i), time).copyTo(picture(where));
  }
  return picture;
}

void writeAngleTrackPlot(const std::string& path, const motion::AngleTable& raw,
                         const motion::AngleTable& filtered, const std::string& title) {
  cv::Mat picture;
  try {
    picture = angleTrackPlot(raw, filtered, title);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  writeImageFile(path, picture);
}

}  // namespace sapiens
