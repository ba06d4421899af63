#include "sapiens/motion/motion_csv.h"

#include "number_text.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/motion/y_up.h"
#include "table_checks.h"

#include <cmath>
#include <limits>

namespace sapiens::motion {

namespace {

void appendField(std::string& text, double value) {
  text += ',';
  if (std::isfinite(value)) appendNumber(text, value);
}

void appendTimeAndFrame(std::string& text, const SampleTimes& times, std::size_t row) {
  appendNumber(text, times.seconds[row]);
  text += ',';
  text += std::to_string(times.frames[row]);
}

}  // namespace

void writeAngleCsv(const std::string& path, const AngleTable& angles) {
  requireWritableTable(path, angles);
  std::string text = "time,frame";
  for (const auto& name : angles.names) text += ',' + name;
  text += '\n';
  for (std::size_t r = 0; r < angles.rows.size(); ++r) {
    appendTimeAndFrame(text, angles.times, r);
    for (const double value : angles.rows[r]) appendField(text, value);
    text += '\n';
  }
  writeFileAtomically(path, text);
}

void writeMarkerCsv(const std::string& path, const MarkerTable& markers) {
  requireWritableTable(path, markers);
  std::string text = "time,frame";
  for (const auto& name : markers.names) text += ',' + name + ".x," + name + ".y," + name + ".z";
  text += '\n';
  for (std::size_t r = 0; r < markers.rows.size(); ++r) {
    appendTimeAndFrame(text, markers.times, r);
    for (const Point3& point : markers.rows[r]) {
      const bool present = std::isfinite(point[0]) && std::isfinite(point[1]) && std::isfinite(point[2]);
      const Point3 yUp = toYUp(point);
      for (const double value : yUp)
        appendField(text, present ? value : std::numeric_limits<double>::quiet_NaN());
    }
    text += '\n';
  }
  writeFileAtomically(path, text);
}

}  // namespace sapiens::motion
