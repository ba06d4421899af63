#include "compute_devices.h"

#include <ATen/Context.h>

#include <QObject>

namespace sapiens::studio {

QStringList availableDevices() {
  QStringList devices{QStringLiteral("cpu")};
  // Asks the CUDA hooks, so it also answers (0) in a CPU-only LibTorch.
  const int count = at::hasCUDA() ? int(at::getNumGPUs()) : 0;
  for (int i = 0; i < count; ++i) devices << QStringLiteral("cuda:%1").arg(i);
  return devices;
}

QStringList dtypesFor(const QString& device) {
  if (device.startsWith(QLatin1String("cuda")))
    return {QStringLiteral("bf16"), QStringLiteral("fp16"), QStringLiteral("fp32")};
  return {QStringLiteral("fp32")};
}

QString defaultDtype(const QString& device) {
  return dtypesFor(device).first();
}

QString unsupportedReason(const QString& device, const QString& dtype) {
  if (!availableDevices().contains(device)) {
    return QObject::tr("%1 is not available here (devices: %2)")
        .arg(device, availableDevices().join(QStringLiteral(", ")));
  }
  if (!dtypesFor(device).contains(dtype)) {
    return QObject::tr("%1 is not offered on %2 (choose %3)")
        .arg(dtype, device, dtypesFor(device).join(QStringLiteral(", ")));
  }
  return {};
}

}  // namespace sapiens::studio
