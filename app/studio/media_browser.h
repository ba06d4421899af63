#pragma once
// The Media dock: one thumbnail per opened image or video (a video's frame from about a tenth of the way
// in, its length in the corner; a warning sign, with the reason as its tooltip, for a file that cannot be
// read). Thumbnails are decoded in the background, in order; choosing one (click or arrow keys) asks the
// window to show that file.

#include <QListWidget>
#include <QStringList>
#include <QThreadPool>

#include <atomic>

namespace sapiens::studio {

class MediaBrowser : public QListWidget {
  Q_OBJECT

 public:
  explicit MediaBrowser(QWidget* parent = nullptr);
  /// Waits for the thumbnail being decoded, if any.
  ~MediaBrowser() override;

  void setFiles(const QStringList& files);
  QStringList files() const { return files_; }
  /// Marks `path` as the one shown, without asking to show it again.
  void markCurrent(const QString& path);

  static constexpr int kThumbnailSize = 96;
  /// A video's entry holds its length in seconds (a double; 0 when the file does not say) under this role.
  static constexpr int kDurationRole = Qt::UserRole + 1;

 Q_SIGNALS:
  void fileChosen(const QString& path);

 private:
  void startThumbnails();

  QStringList files_;
  QThreadPool pool_;
  std::atomic<quint64> generation_{0};
  bool marking_ = false;
};

}  // namespace sapiens::studio
