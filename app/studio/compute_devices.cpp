#include "compute_devices.h"

#include "sapiens/model/compute_choices.h"

#include <QObject>

namespace sapiens::studio {

namespace {

QStringList toStringList(const std::vector<std::string>& items) {
  QStringList list;
  for (const std::string& item : items) list << QString::fromStdString(item);
  return list;
}

}  // namespace

QStringList availableDevices() {
  return toStringList(computeDevices());
}

QStringList dtypesFor(const QString& device) {
  return toStringList(computeDtypeChoices(device.toStdString()));
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

QString dtypeDescription(const QString& device, const QString& dtype) {
  if (device.startsWith(QLatin1String("cuda"))) {
    if (dtype == QLatin1String("bf16")) return QObject::tr("bfloat16: the default on CUDA");
    if (dtype == QLatin1String("fp16")) return QObject::tr("float16");
    return QObject::tr("float32: exact, slower");
  }
  // Reading the CPU's features and the environment is cheap; what auto measures is not asked for here.
  const CpuBf16Support support = cpuBf16Support();
  const QString native =
      support.native()
          ? QObject::tr("this CPU has native bf16 (%1)").arg(QString::fromStdString(support.features()))
      : support.hardware()
          ? QObject::tr("native bf16 is turned off by %1").arg(QString::fromStdString(support.disabledBy))
          : QObject::tr("this CPU has no native bf16 (AVX512_BF16 or AMX)");
  if (dtype == QLatin1String("auto")) {
    return QObject::tr(
               "auto: bf16 where the CPU has native bf16 and runs it at least %1x as fast as fp32 "
               "(measured once), else fp32; %2")
        .arg(kCpuBf16MinSpeedup)
        .arg(native);
  }
  if (dtype == QLatin1String("bf16")) {
    return support.native()
               ? QObject::tr("bfloat16: about half the memory; %1").arg(native)
               : QObject::tr(
                     "bfloat16: runs, but slowly: %1, so bf16 is emulated (many times slower than fp32)")
                     .arg(native);
  }
  return QObject::tr("float32: exact results, the reference precision");
}

}  // namespace sapiens::studio
