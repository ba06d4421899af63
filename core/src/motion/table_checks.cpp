#include "table_checks.h"

#include "sapiens/io/export_error.h"

#include <cmath>
#include <set>
#include <stdexcept>

namespace sapiens::motion {

namespace {

void requireWritableTimes(const std::string& path, const SampleTimes& times, std::size_t rowCount) {
  if (times.size() == 0 && rowCount == 0) throw ExportError(path, "the table has no samples to write");
  if (rowCount != times.size())
    throw ExportError(path, "the table has " + std::to_string(rowCount) + " rows for " +
                                std::to_string(times.size()) + " sample times");
  if (times.size() < 2)
    throw ExportError(path,
                      "the table has a single sample; a motion file needs at least two (it has a rate)");
  try {
    requireIncreasingTimes(times, "sample times");
  } catch (const std::invalid_argument& e) {
    throw ExportError(path, e.what());
  }
}

template <class Row>
void requireRowLengths(const std::string& path, const std::vector<Row>& rows, std::size_t nameCount,
                       const SampleTimes& times) {
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r].size() != nameCount)
      throw ExportError(path, "row " + std::to_string(r) + " (time " + std::to_string(times.seconds[r]) +
                                  " s) has " + std::to_string(rows[r].size()) + " values for " +
                                  std::to_string(nameCount) + " names");
}

std::string timeText(const SampleTimes& times, std::size_t row) {
  return std::to_string(times.seconds[row]) + " s (row " + std::to_string(row) + ")";
}

}  // namespace

void requireWritableNames(const std::string& path, const std::vector<std::string>& names) {
  if (names.empty()) throw ExportError(path, "the table has no columns to write");
  std::set<std::string> seen;
  for (const auto& name : names) {
    if (name.empty()) throw ExportError(path, "a column has an empty name");
    if (name.find_first_of(" \t\r\n,\"'") != std::string::npos)
      throw ExportError(path, "the name '" + name + "' has whitespace, a comma or a quote");
    if (!seen.insert(name).second) throw ExportError(path, "the name '" + name + "' appears twice");
  }
}

void requireWritableTable(const std::string& path, const MarkerTable& table) {
  requireWritableTimes(path, table.times, table.rows.size());
  requireWritableNames(path, table.names);
  requireRowLengths(path, table.rows, table.names.size(), table.times);
}

void requireWritableTable(const std::string& path, const AngleTable& table) {
  requireWritableTimes(path, table.times, table.rows.size());
  requireWritableNames(path, table.names);
  requireRowLengths(path, table.rows, table.names.size(), table.times);
}

void requireCompleteValues(const std::string& path, const MarkerTable& table, std::string_view format) {
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    for (std::size_t m = 0; m < table.names.size(); ++m)
      for (const double v : table.rows[r][m])
        if (!std::isfinite(v))
          throw ExportError(
              path, "marker '" + table.names[m] + "' has no value at " + timeText(table.times, r) + "; " +
                        std::string(format) +
                        " rows cannot have gaps: write a gap-free segment or keepCompleteRows()");
}

void requireCompleteValues(const std::string& path, const AngleTable& table, std::string_view format) {
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    for (std::size_t a = 0; a < table.names.size(); ++a)
      if (!std::isfinite(table.rows[r][a]))
        throw ExportError(path, "angle '" + table.names[a] + "' has no value at " + timeText(table.times, r) +
                                    "; " + std::string(format) +
                                    " rows cannot have gaps: write a gap-free segment or keepCompleteRows()");
}

}  // namespace sapiens::motion
