#pragma once
// What inference can run on here, as the names the core takes: the CPU, and each CUDA device LibTorch
// sees ("cuda:0", ...), with the precisions offered for each (the CPU stays fp32; bf16 and fp16 are
// for CUDA, bf16 being its default).

#include <QString>
#include <QStringList>

namespace sapiens::studio {

/// "cpu", then "cuda:0" .. "cuda:N-1" when this LibTorch build has CUDA and sees N devices.
QStringList availableDevices();
/// "fp32" for the CPU; "bf16", "fp16", "fp32" for a CUDA device (the default first).
QStringList dtypesFor(const QString& device);
/// The first entry of dtypesFor(device).
QString defaultDtype(const QString& device);
/// Empty when `device` is one of availableDevices() and `dtype` one of dtypesFor(device); else a sentence
/// that says why not.
QString unsupportedReason(const QString& device, const QString& dtype);

}  // namespace sapiens::studio
