#pragma once
// The nominal sampling interval of a clip whose samples may be unevenly spaced (variable frame rate,
// left-out rows): the median of the intervals, robust to a few long gaps.

#include "sapiens/motion/motion_tables.h"

namespace sapiens::motion {

/// Median of the differences between consecutive times; needs at least two increasing times.
double medianSampleInterval(const SampleTimes& times);

}  // namespace sapiens::motion
