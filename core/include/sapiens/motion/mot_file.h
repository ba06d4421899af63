#pragma once
// STEM.trackN.mot: joint angles over time as OpenSim's DelimFileAdapter (STO/MOT) reads them.
//   FILE NAME
//   version=1
//   nRows=N
//   nColumns=M + 1 (time counted)
//   inDegrees=yes
//   endheader
//   time <label>...   (tab-separated; then one row per sample, as long as the labels)
// The labels are the angle names, or the OpenSim coordinate names given in `openSimNames` (angle name ->
// coordinate name, e.g. "right_knee.flexion" -> "knee_angle_r"; angles not in it keep their names).
// Values are written as they are (degrees); renaming changes no sign.
// A MOT row cannot hold a missing value: the writer refuses a table with one (an ExportError naming the
// angle and the time); write a gap-free segment or keepCompleteRows() (sapiens/motion/complete_rows.h).
// Other errors as for the CSV files (sapiens/motion/motion_csv.h). The file is replaced atomically.

#include "sapiens/motion/motion_tables.h"

#include <map>
#include <string>

namespace sapiens::motion {

void writeMot(const std::string& path, const AngleTable& angles,
              const std::map<std::string, std::string>& openSimNames = {});

}  // namespace sapiens::motion
