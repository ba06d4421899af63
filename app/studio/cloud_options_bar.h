#pragma once
// The 3-D dock's row of view settings: point size, what the points are coloured by (the picture, the
// normal, the depth, the body part) and whether the people's skeletons show. Remembered between runs.

#include "sapiens/export/point_coloring.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QSpinBox;

namespace sapiens::studio {

class CloudOptionsBar : public QWidget {
  Q_OBJECT

 public:
  explicit CloudOptionsBar(QWidget* parent = nullptr);

  int pointSize() const;
  PointColoring coloring() const;
  bool skeletonsShown() const;

 Q_SIGNALS:
  void pointSizeChanged(int pixels);
  void coloringChanged(sapiens::PointColoring mode);
  void skeletonsToggled(bool shown);

 private:
  QSpinBox* size_;
  QComboBox* coloring_;
  QCheckBox* skeletons_;
};

}  // namespace sapiens::studio
