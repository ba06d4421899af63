#pragma once
// Decodes the image to show on a worker thread; the newest request wins and older results are dropped.
// Results arrive on the GUI thread as signals.

#include <opencv2/core/mat.hpp>

#include <QObject>
#include <QString>
#include <QThreadPool>

namespace sapiens::studio {

class ImageLoader : public QObject {
  Q_OBJECT

 public:
  explicit ImageLoader(QObject* parent = nullptr);
  /// Waits for the decode in progress, if any (one file).
  ~ImageLoader() override;

  /// Starts decoding `path`; a request still waiting is dropped, a running one is ignored when it ends.
  void load(const QString& path);
  bool isBusy() const { return pending_ > 0; }

 Q_SIGNALS:
  void loaded(const QString& path, const cv::Mat& image);
  void failed(const QString& path, const QString& reason);

 private:
  QThreadPool pool_;
  quint64 generation_ = 0;
  int pending_ = 0;
};

}  // namespace sapiens::studio
