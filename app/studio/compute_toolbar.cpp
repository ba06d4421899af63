#include "compute_toolbar.h"

#include "compute_devices.h"

#include <QComboBox>
#include <QLabel>

#include <cmath>

namespace sapiens::studio {

ComputeToolBar::ComputeToolBar(QWidget* parent) : QToolBar(tr("Compute"), parent) {
  setObjectName(QStringLiteral("computeToolBar"));
  devices_ = new QComboBox;
  devices_->setObjectName(QStringLiteral("deviceCombo"));
  devices_->setAccessibleName(tr("Device"));
  devices_->setToolTip(tr("Where the models run; changing it reloads them in the background"));
  devices_->addItems(availableDevices());
  dtypes_ = new QComboBox;
  dtypes_->setObjectName(QStringLiteral("dtypeCombo"));
  dtypes_->setAccessibleName(tr("Precision"));
  auto* deviceLabel = new QLabel(tr(" Device "));
  deviceLabel->setBuddy(devices_);
  auto* dtypeLabel = new QLabel(tr(" Precision "));
  dtypeLabel->setBuddy(dtypes_);
  addWidget(deviceLabel);
  addWidget(devices_);
  addWidget(dtypeLabel);
  addWidget(dtypes_);
  scales_ = new QComboBox;
  scales_->setObjectName(QStringLiteral("inputScaleCombo"));
  scales_->setAccessibleName(tr("Resolution"));
  scales_->setToolTip(
      tr("Input resolution of the models, as a fraction of their native size (1024 x 768 "
         "for most): smaller runs faster, with less detail"));
  for (const int percent : {100, 75, 50, 25})
    scales_->addItem(QStringLiteral("%1%").arg(percent), percent / 100.0);
  auto* scaleLabel = new QLabel(tr(" Resolution "));
  scaleLabel->setBuddy(scales_);
  addWidget(scaleLabel);
  addWidget(scales_);
  fillDtypes(devices_->currentText(), {});
  connect(scales_, QOverload<int>::of(&QComboBox::currentIndexChanged), this, [this] {
    if (!filling_) Q_EMIT inputScaleChosen(inputScale());
  });

  connect(devices_, &QComboBox::currentTextChanged, this, [this](const QString& device) {
    if (filling_) return;
    fillDtypes(device, {});
    Q_EMIT computeChosen(device, dtype());
  });
  connect(dtypes_, &QComboBox::currentTextChanged, this, [this](const QString& chosen) {
    if (!filling_) Q_EMIT computeChosen(device(), chosen);
  });
}

QString ComputeToolBar::device() const {
  return devices_->currentText();
}

QString ComputeToolBar::dtype() const {
  return dtypes_->currentText();
}

double ComputeToolBar::inputScale() const {
  return scales_->currentData().toDouble();
}

void ComputeToolBar::setInputScale(double scale) {
  filling_ = true;
  int best = 0;
  for (int i = 1; i < scales_->count(); ++i) {
    if (std::abs(scales_->itemData(i).toDouble() - scale) <
        std::abs(scales_->itemData(best).toDouble() - scale))
      best = i;
  }
  scales_->setCurrentIndex(best);
  filling_ = false;
}

void ComputeToolBar::setCompute(const QString& device, const QString& dtype) {
  filling_ = true;
  const int index = devices_->findText(device);
  devices_->setCurrentIndex(index >= 0 ? index : 0);
  filling_ = false;
  fillDtypes(devices_->currentText(), dtype);
}

void ComputeToolBar::fillDtypes(const QString& device, const QString& dtype) {
  filling_ = true;
  dtypes_->clear();
  dtypes_->addItems(dtypesFor(device));
  QStringList tips;
  for (int i = 0; i < dtypes_->count(); ++i) {
    const QString tip = dtypeDescription(device, dtypes_->itemText(i));
    dtypes_->setItemData(i, tip, Qt::ToolTipRole);
    tips << tip;
  }
  dtypes_->setToolTip(tr("Precision of the models; changing it reloads them in the background.\n%1")
                          .arg(tips.join(QStringLiteral("\n"))));
  const int index = dtypes_->findText(dtype);
  dtypes_->setCurrentIndex(index >= 0 ? index : 0);
  dtypes_->setEnabled(dtypes_->count() > 1);
  filling_ = false;
}

}  // namespace sapiens::studio
