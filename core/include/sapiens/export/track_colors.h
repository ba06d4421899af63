#pragma once
// One colour per person track, the same in annotated videos and in the studio: hues a golden angle
// apart, so that neighbouring ids never look alike.

#include "sapiens/result/rgb.h"

namespace sapiens {

/// The colour of track `trackId` (>= 0); the official box green for an untracked person (-1).
Rgb trackColor(int trackId);

}  // namespace sapiens
