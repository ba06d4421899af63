#pragma once
// The Compute toolbar: where inference runs (CPU or a CUDA device), in which precision, and at which
// resolution (a fraction of the model's native input size: speed against detail on a CPU). Only what
// this machine and build can run is offered; a choice is reported once, when the user makes it.

#include <QString>
#include <QToolBar>

class QComboBox;

namespace sapiens::studio {

class ComputeToolBar : public QToolBar {
  Q_OBJECT

 public:
  explicit ComputeToolBar(QWidget* parent = nullptr);

  QString device() const;
  QString dtype() const;
  /// Shows `device` and `dtype` without reporting them; an unavailable device falls back to the CPU and
  /// a precision not offered there to the device's default.
  void setCompute(const QString& device, const QString& dtype);
  /// 1 = the model's native input size; 0.75, 0.5, 0.25 are offered. Shown without being reported.
  double inputScale() const;
  void setInputScale(double scale);

 Q_SIGNALS:
  /// The user chose another device or precision.
  void computeChosen(const QString& device, const QString& dtype);
  /// The user chose another input resolution.
  void inputScaleChosen(double scale);

 private:
  void fillDtypes(const QString& device, const QString& dtype);

  QComboBox* devices_ = nullptr;
  QComboBox* dtypes_ = nullptr;
  QComboBox* scales_ = nullptr;
  bool filling_ = false;
};

}  // namespace sapiens::studio
