#pragma once
// What every motion file writer checks before it writes anything; each failure is an ExportError naming
// the file and the problem.

#include "sapiens/motion/motion_tables.h"

#include <string>
#include <string_view>
#include <vector>

namespace sapiens::motion {

/// At least two samples (a motion file has a rate), one row per sample, increasing finite times, names
/// that are unique, non-empty and free of whitespace, commas and quotes (they become CSV, TRC, MOT and BVH
/// labels), and every row as long as the names.
void requireWritableTable(const std::string& path, const MarkerTable& table);
void requireWritableTable(const std::string& path, const AngleTable& table);

/// No missing (non-finite) value anywhere: TRC and MOT readers turn one into NaN, which breaks OpenSim's
/// inverse kinematics. The message names the first marker or angle missing and its time.
void requireCompleteValues(const std::string& path, const MarkerTable& table, std::string_view format);
void requireCompleteValues(const std::string& path, const AngleTable& table, std::string_view format);

/// The checks above for names alone (the MOT writer checks its renamed labels too).
void requireWritableNames(const std::string& path, const std::vector<std::string>& names);

}  // namespace sapiens::motion
