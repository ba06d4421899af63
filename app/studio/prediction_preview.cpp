#include "prediction_preview.h"

#include <QGridLayout>
#include <QLabel>
#include <QPainter>

#include <utility>

namespace sapiens::studio {

// A picture scaled to fit, whatever size the layout gives it.
class PredictionPreview::FittedImage : public QWidget {
 public:
  void setImage(const QImage& image) {
    image_ = image;
    update();
  }
  const QImage& image() const { return image_; }

 protected:
  void paintEvent(QPaintEvent*) override {
    if (image_.isNull()) return;
    QPainter painter(this);
    const QSize size = image_.size().scaled(this->size(), Qt::KeepAspectRatio);
    const QRect target(QPoint((width() - size.width()) / 2, (height() - size.height()) / 2), size);
    painter.setRenderHint(QPainter::SmoothPixmapTransform);
    painter.drawImage(target, image_);
  }

 private:
  QImage image_;
};

PredictionPreview::PredictionPreview(QWidget* parent) : QWidget(parent) {
  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  before_ = new FittedImage;
  before_->setObjectName(QStringLiteral("fineTunePreviewBefore"));
  after_ = new FittedImage;
  after_->setObjectName(QStringLiteral("fineTunePreview"));
  beforeCaption_ = new QLabel;
  beforeCaption_->setObjectName(QStringLiteral("fineTunePreviewBeforeCaption"));
  afterCaption_ = new QLabel;
  afterCaption_->setObjectName(QStringLiteral("fineTunePreviewCaption"));
  int column = 0;
  for (auto [view, caption] : {std::pair{before_, beforeCaption_}, std::pair{after_, afterCaption_}}) {
    view->setMinimumSize(120, 90);
    caption->setWordWrap(true);
    caption->setAlignment(Qt::AlignHCenter | Qt::AlignTop);
    layout->addWidget(view, 0, column);
    layout->addWidget(caption, 1, column);
    layout->setColumnStretch(column++, 1);
  }
  layout->setRowStretch(0, 1);
  clear();
}

void PredictionPreview::setBefore(const QImage& image, const QString& caption) {
  before_->setImage(image);
  beforeCaption_->setText(caption);
}

void PredictionPreview::setAfter(const QImage& image, const QString& caption) {
  after_->setImage(image);
  afterCaption_->setText(caption);
}

void PredictionPreview::clear() {
  setBefore({}, tr("Before training: the head's prediction on a held-out frame appears here"));
  setAfter({}, tr("After: the latest prediction during training"));
}

QImage PredictionPreview::beforeImage() const {
  return before_->image();
}

QImage PredictionPreview::afterImage() const {
  return after_->image();
}

QString PredictionPreview::beforeCaption() const {
  return beforeCaption_->text();
}

QString PredictionPreview::afterCaption() const {
  return afterCaption_->text();
}

}  // namespace sapiens::studio
