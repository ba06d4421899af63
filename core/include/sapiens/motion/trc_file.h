#pragma once
// STEM.trackN.trc: marker trajectories as OpenSim's TRCFileAdapter reads them.
//   PathFileType 4 (X/Y/Z) FILE
//   DataRate CameraRate NumFrames NumMarkers Units OrigDataRate OrigDataStartFrame OrigNumFrames
//   their values (rates = 1 / the median sampling interval, Units m)
//   Frame# Time name1 "" "" name2 "" "" ...
//   "" "" X1 Y1 Z1 X2 Y2 Z2 ...
//   (a blank line, as OpenSim's own writer leaves), then one row per sample: Frame# (1, 2, ...), the time
//   in seconds, 3 coordinates per marker in metres, Y up (sapiens/motion/y_up.h); tab-separated, 3N + 2
//   fields per row.
// A TRC row cannot hold a missing value: the writer refuses a table with one (an ExportError naming the
// marker and the time); write a gap-free segment or keepCompleteRows() (sapiens/motion/complete_rows.h).
// Other errors as for the CSV files (sapiens/motion/motion_csv.h). The file is replaced atomically.

#include "sapiens/motion/motion_tables.h"

#include <string>

namespace sapiens::motion {

void writeTrc(const std::string& path, const MarkerTable& markers);

}  // namespace sapiens::motion
