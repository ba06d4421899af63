#pragma once
// What inference can run on here, as the names the core takes: the CPU, and each CUDA device LibTorch
// sees ("cuda:0", ...), with the precisions offered for each: auto (the core's choice: bf16 where the CPU
// has native bf16 and runs it faster, else fp32), fp32 and bf16 on the CPU; bf16 (the default), fp16
// and fp32 on CUDA.

#include <QString>
#include <QStringList>

namespace sapiens::studio {

/// "cpu", then "cuda:0" .. "cuda:N-1" when this LibTorch build has CUDA and sees N devices.
QStringList availableDevices();
/// "auto", "fp32", "bf16" for the CPU; "bf16", "fp16", "fp32" for a CUDA device (the default first).
QStringList dtypesFor(const QString& device);
/// The first entry of dtypesFor(device).
QString defaultDtype(const QString& device);
/// Empty when `device` is one of availableDevices() and `dtype` one of dtypesFor(device); else a sentence
/// that says why not.
QString unsupportedReason(const QString& device, const QString& dtype);
/// What choosing `dtype` on `device` means here, for the Precision box's tooltips (e.g. that bf16 on a
/// CPU without native bf16 runs, but slowly).
QString dtypeDescription(const QString& device, const QString& dtype);

}  // namespace sapiens::studio
