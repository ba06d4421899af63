#pragma once
// The 3-D dock's row of view settings: point size and what the points are coloured by (the picture,
// the normal, the depth, the body part). Remembered between runs.

#include "sapiens/export/point_coloring.h"

#include <QWidget>

class QComboBox;
class QSpinBox;

namespace sapiens::studio {

class CloudOptionsBar : public QWidget {
  Q_OBJECT

 public:
  explicit CloudOptionsBar(QWidget* parent = nullptr);

  int pointSize() const;
  PointColoring coloring() const;

 Q_SIGNALS:
  void pointSizeChanged(int pixels);
  void coloringChanged(sapiens::PointColoring mode);

 private:
  QSpinBox* size_;
  QComboBox* coloring_;
};

}  // namespace sapiens::studio
