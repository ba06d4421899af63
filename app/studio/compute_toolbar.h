#pragma once
// The Compute toolbar: where inference runs (CPU or a CUDA device) and in which precision. Only what
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

 Q_SIGNALS:
  /// The user chose another device or precision.
  void computeChosen(const QString& device, const QString& dtype);

 private:
  void fillDtypes(const QString& device, const QString& dtype);

  QComboBox* devices_ = nullptr;
  QComboBox* dtypes_ = nullptr;
  bool filling_ = false;
};

}  // namespace sapiens::studio
