#include "image_loader.h"

#include "background_work.h"

#include "sapiens/media/image_io.h"

#include <exception>

namespace sapiens::studio {

ImageLoader::ImageLoader(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(1);
  pool_.setObjectName(QStringLiteral("image decoder"));
}

ImageLoader::~ImageLoader() {
  pool_.clear();
  pool_.waitForDone();
}

void ImageLoader::load(const QString& path) {
  const quint64 generation = ++generation_;
  pool_.clear();
  pending_ = 1;
  // `this` outlives the task: the destructor waits for the pool.
  runInBackground(
      pool_, this, [path] { return readImageBgr(path.toStdString()); },
      [this, path, generation](const cv::Mat& image, const QString& error) {
        if (generation != generation_) return;
        pending_ = 0;
        if (error.isEmpty()) {
          Q_EMIT loaded(path, image);
        } else {
          Q_EMIT failed(path, error);
        }
      });
}

}  // namespace sapiens::studio
