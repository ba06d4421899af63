#include "camera_dialog.h"

#include "sapiens/common/log.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSize>

namespace sapiens::studio {
namespace {

constexpr const char* kTestPattern = "synthetic:";
// What the test pattern uses when the size or rate is left to the driver.
constexpr int kTestPatternWidth = 640;
constexpr int kTestPatternHeight = 480;
constexpr double kTestPatternFps = 30;

}  // namespace

CameraDialog::CameraDialog(QWidget* parent) : QDialog(parent) {
  setObjectName(QStringLiteral("cameraDialog"));
  setWindowTitle(tr("Open Camera"));

  devices_ = new QComboBox(this);
  devices_->setObjectName(QStringLiteral("cameraDevices"));
  devices_->setAccessibleName(tr("Camera"));
  for (const CameraDevice& camera : listCameras()) {
    const QString label = QStringLiteral("%1 (%2, %3)")
                              .arg(QString::fromStdString(camera.name), QString::fromStdString(camera.path),
                                   QString::fromStdString(camera.busInfo));
    devices_->addItem(label, QString::fromStdString(camera.path));
  }
  logger().info("camera picker: {} V4L2 camera(s)", devices_->count());
  devices_->addItem(tr("Test pattern (synthetic camera)"), QString::fromLatin1(kTestPattern));

  sizes_ = new QComboBox(this);
  sizes_->setObjectName(QStringLiteral("cameraSizes"));
  sizes_->setAccessibleName(tr("Frame size"));
  sizes_->addItem(tr("Camera default"), QSize());
  for (const QSize size : {QSize(640, 480), QSize(1280, 720), QSize(1920, 1080)})
    sizes_->addItem(QStringLiteral("%1 x %2").arg(size.width()).arg(size.height()), size);

  rates_ = new QComboBox(this);
  rates_->setObjectName(QStringLiteral("cameraRates"));
  rates_->setAccessibleName(tr("Frame rate"));
  rates_->addItem(tr("Camera default"), 0.0);
  for (const double fps : {15.0, 30.0, 60.0}) rates_->addItem(tr("%1 fps").arg(fps), fps);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("&Start"));
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

  auto* form = new QFormLayout(this);
  form->addRow(tr("&Camera:"), devices_);
  form->addRow(tr("&Size:"), sizes_);
  form->addRow(tr("&Rate:"), rates_);
  if (devices_->count() == 1) {
    auto* none = new QLabel(tr("No V4L2 camera found (/dev/video*)."), this);
    none->setObjectName(QStringLiteral("noCameraLabel"));
    form->addRow(none);
  }
  form->addRow(buttons);
}

QString CameraDialog::device() const {
  const QString device = devices_->currentData().toString();
  if (device != QLatin1String(kTestPattern)) return device;
  const CameraOptions chosen = options();
  return QStringLiteral("%1%2x%3@%4")
      .arg(device)
      .arg(chosen.width > 0 ? chosen.width : kTestPatternWidth)
      .arg(chosen.height > 0 ? chosen.height : kTestPatternHeight)
      .arg(chosen.fps > 0 ? chosen.fps : kTestPatternFps);
}

CameraOptions CameraDialog::options() const {
  CameraOptions options;
  const QSize size = sizes_->currentData().toSize();
  if (size.isValid()) {
    options.width = size.width();
    options.height = size.height();
  }
  options.fps = rates_->currentData().toDouble();
  return options;
}

}  // namespace sapiens::studio
