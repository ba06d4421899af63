#include "sapiens/motion/complete_rows.h"

#include <algorithm>
#include <cmath>

namespace sapiens::motion {

namespace {

bool isComplete(const std::vector<Point3>& row) {
  return std::all_of(row.begin(), row.end(), [](const Point3& p) {
    return std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]);
  });
}

bool isComplete(const std::vector<double>& row) {
  return std::all_of(row.begin(), row.end(), [](double v) { return std::isfinite(v); });
}

template <class Table>
Table keepComplete(const Table& table) {
  Table kept;
  kept.names = table.names;
  for (std::size_t r = 0; r < table.rows.size() && r < table.times.size(); ++r) {
    if (!isComplete(table.rows[r])) continue;
    kept.rows.push_back(table.rows[r]);
    kept.times.seconds.push_back(table.times.seconds[r]);
    if (r < table.times.frames.size()) kept.times.frames.push_back(table.times.frames[r]);
  }
  return kept;
}

}  // namespace

MarkerTable keepCompleteRows(const MarkerTable& table) {
  return keepComplete(table);
}
AngleTable keepCompleteRows(const AngleTable& table) {
  return keepComplete(table);
}

}  // namespace sapiens::motion
