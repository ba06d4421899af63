#include "image_loader.h"

#include "thread_priority.h"

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
  pool_.start([this, path, generation] {
    runInBackgroundPriority();
    cv::Mat image;
    QString error;
    try {
      image = readImageBgr(path.toStdString());
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    // Runs on the GUI thread; `this` outlives it because the destructor waits for this task.
    QMetaObject::invokeMethod(
        this,
        [this, path, generation, image, error] {
          if (generation != generation_) return;
          pending_ = 0;
          if (error.isEmpty()) {
            Q_EMIT loaded(path, image);
          } else {
            Q_EMIT failed(path, error);
          }
        },
        Qt::QueuedConnection);
  });
}

}  // namespace sapiens::studio
