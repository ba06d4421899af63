#pragma once
// The core's track colours (sapiens/export/track_colors.h) as Qt colours, for the picture and the timeline.

#include <QColor>

namespace sapiens::widgets {

/// The colour of track `trackId` (>= 0); green, the untracked box colour, for -1.
QColor trackColor(int trackId);

}  // namespace sapiens::widgets
