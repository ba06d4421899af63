#include "track_colors.h"

#include "sapiens/export/track_colors.h"

namespace sapiens::widgets {

QColor trackColor(int trackId) {
  const Rgb rgb = sapiens::trackColor(trackId);
  return QColor(rgb[0], rgb[1], rgb[2]);
}

}  // namespace sapiens::widgets
