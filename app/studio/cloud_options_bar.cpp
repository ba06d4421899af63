#include "cloud_options_bar.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>

namespace sapiens::studio {

CloudOptionsBar::CloudOptionsBar(QWidget* parent)
    : QWidget(parent),
      size_(new QSpinBox),
      coloring_(new QComboBox),
      skeletons_(new QCheckBox(tr("Skeleton"))) {
  setObjectName(QStringLiteral("cloudOptions"));
  size_->setObjectName(QStringLiteral("cloudPointSize"));
  size_->setAccessibleName(tr("Point size"));
  size_->setRange(1, 12);
  size_->setSuffix(tr(" px"));
  coloring_->setObjectName(QStringLiteral("cloudColoring"));
  coloring_->setAccessibleName(tr("Colour the points by"));
  coloring_->addItem(tr("Picture"), int(PointColoring::Picture));
  coloring_->addItem(tr("Normal"), int(PointColoring::Normal));
  coloring_->addItem(tr("Depth"), int(PointColoring::Depth));
  coloring_->addItem(tr("Body part"), int(PointColoring::BodyPart));
  QSettings settings;
  size_->setValue(settings.value(QStringLiteral("view/cloudPointSize"), 2).toInt());
  const auto saved =
      parsePointColoring(settings.value(QStringLiteral("view/cloudColoring"), QStringLiteral("picture"))
                             .toString()
                             .toStdString());
  coloring_->setCurrentIndex(std::max(0, coloring_->findData(int(saved.value_or(PointColoring::Picture)))));
  skeletons_->setObjectName(QStringLiteral("cloudSkeletons"));
  skeletons_->setToolTip(
      tr("The people's keypoints lifted by the pointmap, joints and bones in each track's "
         "colour"));
  skeletons_->setChecked(settings.value(QStringLiteral("view/cloudSkeletons"), true).toBool());
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 2, 4, 2);
  layout->addWidget(new QLabel(tr("Points")));
  layout->addWidget(size_);
  layout->addWidget(new QLabel(tr("Colour by")));
  layout->addWidget(coloring_, 1);
  layout->addWidget(skeletons_);
  connect(size_, &QSpinBox::valueChanged, this, [this](int pixels) {
    QSettings().setValue(QStringLiteral("view/cloudPointSize"), pixels);
    Q_EMIT pointSizeChanged(pixels);
  });
  connect(coloring_, &QComboBox::currentIndexChanged, this, [this] {
    QSettings().setValue(QStringLiteral("view/cloudColoring"),
                         QString::fromLatin1(pointColoringName(coloring()).data()));
    Q_EMIT coloringChanged(coloring());
  });
  connect(skeletons_, &QCheckBox::toggled, this, [this](bool shown) {
    QSettings().setValue(QStringLiteral("view/cloudSkeletons"), shown);
    Q_EMIT skeletonsToggled(shown);
  });
}

int CloudOptionsBar::pointSize() const {
  return size_->value();
}

PointColoring CloudOptionsBar::coloring() const {
  return PointColoring(coloring_->currentData().toInt());
}

bool CloudOptionsBar::skeletonsShown() const {
  return skeletons_->isChecked();
}

}  // namespace sapiens::studio
