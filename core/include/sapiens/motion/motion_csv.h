#pragma once
// Spreadsheet copies of one track's motion: STEM.trackN.angles.csv and STEM.trackN.keypoints3d.csv.
// Header `time,frame,<name>...` (3-D: `<name>.x,<name>.y,<name>.z`), one row per sample, the shortest
// text that reads back as the same number, an empty field where a value is missing. 3-D points are in
// metres, Y up (sapiens/motion/y_up.h), like the TRC and BVH files of the same track.
// Errors are ExportError naming the file: no samples or a single one, rows of the wrong length, times
// that do not increase, bad names. The file is replaced atomically.

#include "sapiens/motion/motion_tables.h"

#include <string>

namespace sapiens::motion {

void writeAngleCsv(const std::string& path, const AngleTable& angles);
void writeMarkerCsv(const std::string& path, const MarkerTable& markers);

}  // namespace sapiens::motion
