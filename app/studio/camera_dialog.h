#pragma once
// File > Open Camera: the V4L2 cameras present (name, driver, bus), a test-pattern camera for trying the
// live path without one, and the size and rate to ask the driver for.

#include "sapiens/media/camera_source.h"

#include <QDialog>
#include <QString>

class QComboBox;

namespace sapiens::studio {

class CameraDialog : public QDialog {
  Q_OBJECT

 public:
  explicit CameraDialog(QWidget* parent = nullptr);

  /// "/dev/videoN" or "synthetic:WxH@FPS".
  QString device() const;
  /// The size and rate chosen for a V4L2 camera (0 = the driver's current ones).
  CameraOptions options() const;

 private:
  QComboBox* devices_ = nullptr;
  QComboBox* sizes_ = nullptr;
  QComboBox* rates_ = nullptr;
};

}  // namespace sapiens::studio
