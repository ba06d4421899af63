#include "sapiens/motion/trc_file.h"

#include "number_text.h"
#include "sample_interval.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/motion/y_up.h"
#include "table_checks.h"

#include <filesystem>

namespace sapiens::motion {

namespace {

std::string trcHeader(const std::string& path, const MarkerTable& markers) {
  const std::string frameCount = std::to_string(markers.rows.size());
  std::string rate;
  appendNumber(rate, 1.0 / medianSampleInterval(markers.times));
  std::string text = "PathFileType\t4\t(X/Y/Z)\t" + std::filesystem::path(path).filename().string() + "\n";
  text +=
      "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n";
  text += rate + '\t' + rate + '\t' + frameCount + '\t' + std::to_string(markers.names.size()) + "\tm\t" +
          rate + "\t1\t" + frameCount + '\n';
  text += "Frame#\tTime";
  for (const auto& name : markers.names) text += '\t' + name + "\t\t";
  text += "\n\t";
  for (std::size_t m = 1; m <= markers.names.size(); ++m) {
    const std::string index = std::to_string(m);
    text += "\tX" + index + "\tY" + index + "\tZ" + index;
  }
  text += "\n\n";
  return text;
}

}  // namespace

void writeTrc(const std::string& path, const MarkerTable& markers) {
  requireWritableTable(path, markers);
  requireCompleteValues(path, markers, "TRC");
  std::string text = trcHeader(path, markers);
  for (std::size_t r = 0; r < markers.rows.size(); ++r) {
    text += std::to_string(r + 1);
    text += '\t';
    appendNumber(text, markers.times.seconds[r]);
    for (const Point3& point : markers.rows[r])
      for (const double value : toYUp(point)) {
        text += '\t';
        appendNumber(text, value);
      }
    text += '\n';
  }
  writeFileAtomically(path, text);
}

}  // namespace sapiens::motion
