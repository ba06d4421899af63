#include "media_browser.h"

#include "background_work.h"

#include "sapiens/media/image_io.h"

#include <opencv2/core/mat.hpp>

#include <QApplication>
#include <QFileInfo>
#include <QIcon>
#include <QImage>
#include <QPixmap>
#include <QStyle>

#include <exception>

namespace sapiens::studio {

MediaBrowser::MediaBrowser(QWidget* parent) : QListWidget(parent) {
  setObjectName(QStringLiteral("mediaBrowser"));
  setAccessibleName(tr("Media"));
  setViewMode(QListView::IconMode);
  setIconSize(QSize(kThumbnailSize, kThumbnailSize));
  setGridSize(QSize(kThumbnailSize + 24, kThumbnailSize + 36));
  setResizeMode(QListView::Adjust);
  setMovement(QListView::Static);
  setUniformItemSizes(true);
  setWordWrap(false);
  setTextElideMode(Qt::ElideMiddle);
  setSelectionMode(QAbstractItemView::SingleSelection);
  pool_.setMaxThreadCount(1);

  connect(this, &QListWidget::currentRowChanged, this, [this](int row) {
    if (!marking_ && row >= 0 && row < files_.size()) Q_EMIT fileChosen(files_[row]);
  });
}

MediaBrowser::~MediaBrowser() {
  ++generation_;
  pool_.clear();
  pool_.waitForDone();
}

void MediaBrowser::setFiles(const QStringList& files) {
  ++generation_;
  pool_.clear();
  files_ = files;
  marking_ = true;
  clear();
  const QIcon placeholder = style()->standardIcon(QStyle::SP_FileIcon);
  for (const QString& file : files_) {
    auto* item = new QListWidgetItem(placeholder, QFileInfo(file).fileName(), this);
    item->setToolTip(file);
  }
  marking_ = false;
  startThumbnails();
}

void MediaBrowser::markCurrent(const QString& path) {
  const int row = int(files_.indexOf(path));
  marking_ = true;
  setCurrentRow(row);
  if (row >= 0) scrollToItem(item(row));
  marking_ = false;
}

void MediaBrowser::startThumbnails() {
  const quint64 generation = generation_;
  for (int row = 0; row < files_.size(); ++row) {
    const QString path = files_[row];
    runInBackground(
        pool_, this,
        [this, path, generation] {
          if (generation != generation_) return QImage();  // a newer folder was opened
          const cv::Mat bgr = readImageThumbnailBgr(path.toStdString(), kThumbnailSize);
          return QImage(bgr.data, bgr.cols, bgr.rows, int(bgr.step), QImage::Format_BGR888).copy();
        },
        [this, row, generation](const QImage& thumbnail, const QString& error) {
          if (generation != generation_ || row >= count()) return;
          QListWidgetItem* entry = item(row);
          if (error.isEmpty()) {
            entry->setIcon(QIcon(QPixmap::fromImage(thumbnail)));
          } else {
            entry->setIcon(style()->standardIcon(QStyle::SP_MessageBoxWarning));
            entry->setToolTip(error);
          }
        });
  }
}

}  // namespace sapiens::studio
