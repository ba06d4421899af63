#pragma once
// File > Export: one result file of the picture on display (written in the background) and the annotated
// video of the open video file (written on its own thread, with a progress dialog that cancels).

#include "result_export.h"

#include "sapiens/model/task.h"
#include "sapiens/pipeline/person_box_file.h"

#include <QObject>
#include <QString>

#include <functional>
#include <map>
#include <optional>
#include <set>

class QAction;
class QMenu;
class QOpenGLWidget;
class QThreadPool;
class QWidget;

namespace sapiens::studio {

class InferenceSession;
class MediaPlayer;
class ResultLayers;
class TasksPanel;
class VideoExport;

/// What an export takes from the window when it starts.
struct ExportSubject {
  QString file;       ///< the image or video on display
  qint64 frame = -1;  ///< the video frame on display; -1: a picture
  std::set<Task> demoTasks;
  std::optional<PersonBoxFile> videoBoxes;
};

class ExportController : public QObject {
  Q_OBJECT

 public:
  struct Sources {
    QWidget* window = nullptr;  ///< parent of the dialogs
    const ResultLayers* layers = nullptr;
    const TasksPanel* tasks = nullptr;
    const InferenceSession* inference = nullptr;
    const MediaPlayer* player = nullptr;
    QThreadPool* pool = nullptr;           ///< its owner waits for it before this goes
    QOpenGLWidget* pictureView = nullptr;  ///< what File > Save View As saves
    QOpenGLWidget* cloudView = nullptr;    ///< what File > Save 3-D View As saves
    std::function<ExportSubject()> subject;
  };
  explicit ExportController(Sources sources, QObject* parent = nullptr);

  /// File > Export and its entries, added to `file`.
  void addMenu(QMenu* file);
  /// Enables what there is something for: a result of the task, an open video file, no video export running.
  void updateActions();
  /// Asks for a file name (a window-modal dialog), then exportResult.
  void chooseExport(ExportKind kind);
  void exportResult(ExportKind kind, const QString& path);
  void chooseVideoExport();
  void exportAnnotatedVideo(const QString& path);
  bool videoExportRunning() const;
  /// Writes what the picture view (or the 3-D view) shows, at its size in device pixels, as a PNG (off
  /// the GUI thread; viewSaved follows).
  void saveView(bool cloud, const QString& path);
  void chooseSaveView(bool cloud);
  /// Quitting: stops the video export at once and removes its partial file.
  void abandonVideoExport();

 Q_SIGNALS:
  /// An export finished; `error` is empty on success.
  void exportFinished(const QString& path, const QString& error);
  /// A view was saved as a PNG; `error` is empty on success.
  void viewSaved(const QString& path, const QString& error);
  /// An annotated video export ended; `error` is empty on success and after a cancel.
  void videoExportFinished(const QString& path, const QString& error);
  /// For the status bar; `timeoutMs` 0: until the next message.
  void message(const QString& text, int timeoutMs);

 private:
  void onVideoExportFinished(const QString& path, qint64 frames, const QString& error, bool cancelled);
  void showProgress(const QString& path);

  Sources s_;
  VideoExport* videoExport_ = nullptr;
  QMenu* menu_ = nullptr;
  std::map<ExportKind, QAction*> actions_;
  QAction* videoAction_ = nullptr;
};

}  // namespace sapiens::studio
