#pragma once
// The fine-tuning panel's preview: the head's prediction on one frame before training (right after the
// features are prepared, before the first step) and after (the latest preview), side by side, each
// scaled to fit and captioned.

#include <QImage>
#include <QString>
#include <QWidget>

class QLabel;

namespace sapiens::studio {

class PredictionPreview : public QWidget {
  Q_OBJECT

 public:
  explicit PredictionPreview(QWidget* parent = nullptr);

  void setBefore(const QImage& image, const QString& caption);
  void setAfter(const QImage& image, const QString& caption);
  /// Both pictures gone, the captions back to saying what will appear.
  void clear();

  QImage beforeImage() const;
  QImage afterImage() const;
  QString beforeCaption() const;
  QString afterCaption() const;

 private:
  class FittedImage;
  FittedImage* before_ = nullptr;
  FittedImage* after_ = nullptr;
  QLabel* beforeCaption_ = nullptr;
  QLabel* afterCaption_ = nullptr;
};

}  // namespace sapiens::studio
