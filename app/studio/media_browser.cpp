#include "media_browser.h"

#include "background_work.h"

#include "sapiens/media/image_io.h"
#include "sapiens/media/video_file_source.h"

#include <opencv2/core/mat.hpp>
#include <opencv2/imgproc.hpp>

#include <QApplication>
#include <QColor>
#include <QFileInfo>
#include <QFont>
#include <QFontMetrics>
#include <QIcon>
#include <QImage>
#include <QPainter>
#include <QPixmap>
#include <QStyle>

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>

namespace sapiens::studio {
namespace {

// A row's thumbnail: the picture, and for a video its length.
struct Thumbnail {
  QImage picture;
  double durationSeconds = -1;  ///< a video's (0 when the file does not say); < 0 for a picture
};

QImage qImageOf(const cv::Mat& bgr) {
  return QImage(bgr.data, bgr.cols, bgr.rows, int(bgr.step), QImage::Format_BGR888).copy();
}

// At most maxSide pixels wide and high, aspect kept, never enlarged.
cv::Mat fitted(const cv::Mat& bgr, int maxSide) {
  const double scale = std::min(1.0, double(maxSide) / std::max(bgr.cols, bgr.rows));
  if (scale >= 1.0) return bgr;
  cv::Mat small;
  cv::resize(bgr, small,
             cv::Size(std::max(1, int(std::lround(bgr.cols * scale))),
                      std::max(1, int(std::lround(bgr.rows * scale)))),
             0, 0, cv::INTER_AREA);
  return small;
}

// A video's frame from about a tenth of the way in (the first frames are often black or a title), else
// its first frame where that seek fails. Throws MediaError naming the file when no frame can be read.
Thumbnail videoThumbnail(const std::string& path, int maxSide) {
  VideoFileSource source(path);
  const SourceInfo info = source.info();
  std::optional<Frame> frame;
  try {
    if (info.frameCount > 1) source.seek(info.frameCount / 10);
    frame = source.next();
  } catch (const MediaError&) {
    frame = VideoFileSource(path).next();
  }
  if (!frame) throw MediaError(path, "has no frame to show");
  return {qImageOf(fitted(frame->bgr, maxSide)), info.durationSeconds};
}

// "0:07", "12:34", "1:02:03".
QString durationText(double seconds) {
  const auto total = static_cast<long long>(std::lround(seconds));
  const QString rest = QStringLiteral("%1").arg(total % 60, 2, 10, QLatin1Char('0'));
  if (total < 3600) return QStringLiteral("%1:%2").arg(total / 60).arg(rest);
  return QStringLiteral("%1:%2:%3").arg(total / 3600).arg(total / 60 % 60, 2, 10, QLatin1Char('0')).arg(rest);
}

// The thumbnail with a video's length in its bottom-right corner, as file browsers show it.
QPixmap withDuration(const Thumbnail& thumbnail) {
  QPixmap pixmap = QPixmap::fromImage(thumbnail.picture);
  if (thumbnail.durationSeconds <= 0) return pixmap;
  QPainter painter(&pixmap);
  QFont font = painter.font();
  font.setPixelSize(11);
  painter.setFont(font);
  const QString text = durationText(thumbnail.durationSeconds);
  const QSize size = QFontMetrics(font).size(Qt::TextSingleLine, text) + QSize(6, 2);
  const QRect badge(pixmap.width() - size.width() - 2, pixmap.height() - size.height() - 2, size.width(),
                    size.height());
  painter.fillRect(badge, QColor(0, 0, 0, 170));
  painter.setPen(Qt::white);
  painter.drawText(badge, Qt::AlignCenter, text);
  return pixmap;
}

}  // namespace

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
          if (generation != generation_) return Thumbnail();  // a newer folder was opened
          // Anything not named like a picture is opened as a video (MainWindow::showFile does the same).
          if (!hasImageExtension(path.toStdString()))
            return videoThumbnail(path.toStdString(), kThumbnailSize);
          return Thumbnail{qImageOf(readImageThumbnailBgr(path.toStdString(), kThumbnailSize))};
        },
        [this, row, path, generation](const Thumbnail& thumbnail, const QString& error) {
          if (generation != generation_ || row >= count()) return;
          QListWidgetItem* entry = item(row);
          if (error.isEmpty()) {
            entry->setIcon(QIcon(withDuration(thumbnail)));
            if (thumbnail.durationSeconds >= 0) {
              entry->setData(kDurationRole, thumbnail.durationSeconds);
              if (thumbnail.durationSeconds > 0)
                entry->setToolTip(tr("%1\nvideo, %2").arg(path, durationText(thumbnail.durationSeconds)));
            }
          } else {
            entry->setIcon(style()->standardIcon(QStyle::SP_MessageBoxWarning));
            entry->setToolTip(error);
          }
        });
  }
}

}  // namespace sapiens::studio
