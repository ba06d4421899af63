#include "export_controller.h"

#include "background_work.h"
#include "failure_dialog.h"
#include "file_dialogs.h"
#include "inference_session.h"
#include "inference_worker.h"
#include "media_player.h"
#include "result_layers.h"
#include "tasks_panel.h"
#include "video_export.h"

#include "sapiens/common/log.h"

#include <QAction>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QImage>
#include <QMenu>
#include <QOpenGLWidget>
#include <QProgressDialog>
#include <QSaveFile>

#include <utility>

namespace sapiens::studio {
namespace {

constexpr int kMessageMs = 10000;

// A non-native, window-modal save dialog (open(), not exec(): the GUI keeps running while it is up).
void askForFile(QWidget* window, const QString& name, const QString& title, const QString& suggested,
                const QString& filter, std::function<void(const QString&)> chosen) {
  auto* dialog = new QFileDialog(window, title, suggested, filter);
  dialog->setObjectName(name);
  dialog->setAcceptMode(QFileDialog::AcceptSave);
  dialog->setOption(QFileDialog::DontUseNativeDialog);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->selectFile(suggested);
  QObject::connect(dialog, &QFileDialog::fileSelected, window,
                   [chosen = std::move(chosen)](const QString& path) {
                     rememberDialogDirectory(path);
                     chosen(path);
                   });
  dialog->open();
}

}  // namespace

ExportController::ExportController(Sources sources, QObject* parent)
    : QObject(parent), s_(std::move(sources)) {
  videoExport_ = new VideoExport(this);
  connect(videoExport_, &VideoExport::finished, this, &ExportController::onVideoExportFinished);
}

void ExportController::addMenu(QMenu* file) {
  menu_ = file->addMenu(tr("&Export"));
  menu_->setObjectName(QStringLiteral("exportMenu"));
  for (const ExportKindInfo& info : exportKinds()) {
    QAction* action = menu_->addAction(tr(info.label));
    action->setObjectName(QStringLiteral("actionExport_") + QLatin1String(info.id));
    const ExportKind kind = info.kind;
    connect(action, &QAction::triggered, this, [this, kind] { chooseExport(kind); });
    actions_[kind] = action;
  }
  menu_->addSeparator();
  videoAction_ = menu_->addAction(tr("Annotated &Video..."));
  videoAction_->setObjectName(QStringLiteral("actionExport_video"));
  connect(videoAction_, &QAction::triggered, this, &ExportController::chooseVideoExport);
  QAction* saveView = file->addAction(tr("Save &View As..."));
  saveView->setObjectName(QStringLiteral("actionSaveView"));
  saveView->setShortcut(QKeySequence(tr("Ctrl+Shift+S")));
  connect(saveView, &QAction::triggered, this, [this] { chooseSaveView(false); });
  QAction* saveCloud = file->addAction(tr("Save &3-D View As..."));
  saveCloud->setObjectName(QStringLiteral("actionSaveCloudView"));
  saveCloud->setShortcut(QKeySequence(tr("Ctrl+Shift+D")));
  connect(saveCloud, &QAction::triggered, this, [this] { chooseSaveView(true); });
}

void ExportController::chooseSaveView(bool cloud) {
  const QString base = QFileInfo(s_.subject().file).completeBaseName();
  const QString name = (base.isEmpty() ? QStringLiteral("view") : base) +
                       (cloud ? QStringLiteral(".3d-view.png") : QStringLiteral(".view.png"));
  askForFile(s_.window, QStringLiteral("saveViewDialog"), cloud ? tr("Save 3-D View") : tr("Save View"),
             QDir(dialogDirectory()).filePath(name), tr("PNG image (*.png)"),
             [this, cloud](const QString& path) { saveView(cloud, path); });
}

void ExportController::saveView(bool cloud, const QString& path) {
  QOpenGLWidget* view = cloud ? s_.cloudView : s_.pictureView;
  const QImage image = view->grabFramebuffer();  // what is on screen, at its size in device pixels
  runInBackground(
      *s_.pool, this,
      [image, path] {
        QSaveFile file(path);  // written beside, renamed into place
        if (!file.open(QIODevice::WriteOnly) || !image.save(&file, "PNG") || !file.commit())
          throw std::runtime_error("cannot write " + path.toStdString() + ": " +
                                   file.errorString().toStdString());
        return true;
      },
      [this, path](bool, const QString& error) {
        if (error.isEmpty()) {
          Q_EMIT message(tr("Saved the view as %1").arg(path), kMessageMs);
        } else {
          logger().error("{}", error.toStdString());
          showFailure(s_.window, tr("Cannot save the view"), path, error);
        }
        Q_EMIT viewSaved(path, error);
      });
}

void ExportController::updateActions() {
  const bool videoFile = s_.player->isOpen() && !s_.player->info().live;
  const auto& result = s_.layers->result();
  menu_->setEnabled(result || videoFile);
  for (const auto& [kind, action] : actions_) action->setEnabled(result && result->has(exportTask(kind)));
  videoAction_->setEnabled(videoFile && !videoExport_->isRunning());
}

void ExportController::chooseExport(ExportKind kind) {
  if (!s_.layers->result()) return;
  const ExportSubject subject = s_.subject();
  QString base = QFileInfo(subject.file).completeBaseName();
  if (subject.frame >= 0) base += QStringLiteral("_frame%1").arg(subject.frame, 6, 10, QLatin1Char('0'));
  const ExportKindInfo& info = exportKindInfo(kind);
  const QString suffix = QString::fromLatin1(resultFileInfo(info.file).suffix);
  askForFile(s_.window, QStringLiteral("exportDialog"), tr("Export"),
             QDir(dialogDirectory()).filePath(base + suffix), tr(info.filter),
             [this, kind](const QString& path) { exportResult(kind, path); });
}

void ExportController::exportResult(ExportKind kind, const QString& path) {
  if (!s_.layers->result()) {
    const QString error = tr("Nothing to export: run the tasks first");
    Q_EMIT message(error, kMessageMs);
    Q_EMIT exportFinished(path, error);
    return;
  }
  const ExportSubject subject = s_.subject();
  ExportRequest request;
  request.kind = kind;
  request.path = path.toStdString();
  request.frame = *s_.layers->result();
  request.imageBgr = s_.layers->picture();
  request.imageName = QFileInfo(subject.file).fileName().toStdString();
  request.keypointThreshold = float(s_.tasks->keypointThreshold());
  request.fromDemoWeights = subject.demoTasks.count(exportTask(kind)) > 0;
  Q_EMIT message(tr("Writing %1...").arg(QFileInfo(path).fileName()), 0);
  runInBackground(
      *s_.pool, this,
      [request] {
        writeExport(request);
        return true;
      },
      [this, path](bool, const QString& error) {
        if (error.isEmpty()) {
          logger().info("exported {}", path.toStdString());
          Q_EMIT message(tr("Wrote %1").arg(path), kMessageMs);
        } else {
          logger().error("export failed: {}", error.toStdString());
          Q_EMIT message(error, kMessageMs);
          showFailure(s_.window, tr("Export failed"), path, error);
        }
        Q_EMIT exportFinished(path, error);
      });
}

void ExportController::chooseVideoExport() {
  const QString base = QFileInfo(s_.subject().file).completeBaseName();
  askForFile(s_.window, QStringLiteral("videoExportDialog"), tr("Export Annotated Video"),
             QDir(dialogDirectory()).filePath(base + QStringLiteral(".annotated.mp4")), tr(kVideoFilter),
             [this](const QString& path) { exportAnnotatedVideo(path); });
}

void ExportController::exportAnnotatedVideo(const QString& path) {
  const auto refuse = [this, &path](const QString& error) {
    Q_EMIT message(error, kMessageMs);
    Q_EMIT videoExportFinished(path, error);
  };
  if (!s_.player->isOpen() || s_.player->info().live) return refuse(tr("Open a video file first"));
  const ExportSubject subject = s_.subject();
  VideoExportRequest request;
  request.input = subject.file;
  request.output = path;
  for (Task task : headTasksInRunOrder()) {
    if (!contains(s_.tasks->selectedTasks(), task)) continue;
    const auto model = s_.inference->models().find(task);
    if (model == s_.inference->models().end() || model->second.path.isEmpty())
      return refuse(tr("No %1 model: load one (Models menu) or uncheck the task").arg(taskLabel(task)));
    request.models[task] = model->second.path;
  }
  if (request.models.empty()) return refuse(tr("Check at least one task in the Tasks and Layers dock"));
  request.device = s_.inference->device();
  request.dtype = s_.inference->dtype();
  if (s_.inference->inputScale() != 1.0)
    request.inputSize = scaledInputSize(InputSize{}, s_.inference->inputScale());
  request.keypointThreshold = float(s_.tasks->keypointThreshold());
  request.personBoxes = subject.videoBoxes;
  showProgress(path);
  logger().info("writing the annotated video {}", path.toStdString());
  videoExport_->start(request);
  updateActions();
}

void ExportController::showProgress(const QString& path) {
  auto* progress =
      new QProgressDialog(tr("Writing %1...").arg(QFileInfo(path).fileName()), tr("Cancel"), 0, 0, s_.window);
  progress->setObjectName(QStringLiteral("videoExportProgress"));
  progress->setWindowModality(Qt::WindowModal);
  progress->setMinimumDuration(0);
  progress->setAttribute(Qt::WA_DeleteOnClose);
  connect(progress, &QProgressDialog::canceled, videoExport_, &VideoExport::cancel);
  connect(videoExport_, &VideoExport::progress, progress, [progress](qint64 done, qint64 total, double fps) {
    if (total > 0) progress->setMaximum(int(total));
    progress->setValue(int(done));
    progress->setLabelText(total > 0
                               ? tr("Frame %1 of %2, %3 frames/s").arg(done).arg(total).arg(fps, 0, 'f', 1)
                               : tr("Frame %1, %2 frames/s").arg(done).arg(fps, 0, 'f', 1));
  });
  connect(videoExport_, &VideoExport::finished, progress, &QProgressDialog::close);
  progress->show();
}

bool ExportController::videoExportRunning() const {
  return videoExport_->isRunning();
}

void ExportController::abandonVideoExport() {
  videoExport_->abandon();
}

void ExportController::onVideoExportFinished(const QString& path, qint64 frames, const QString& error,
                                             bool cancelled) {
  QString text;
  if (!error.isEmpty()) {
    text = tr("Annotated video stopped after %1 frames: %2").arg(frames).arg(error);
    showFailure(s_.window, tr("The annotated video stopped"), path, error);
  } else if (cancelled) {
    text = tr("Cancelled: the %1 frames done are in %2").arg(frames).arg(QFileInfo(path).fileName());
  } else {
    text = tr("Wrote %1 (%2 frames)").arg(QFileInfo(path).fileName()).arg(frames);
  }
  logger().info("{}", text.toStdString());
  Q_EMIT message(text, kMessageMs);
  updateActions();
  Q_EMIT videoExportFinished(path, error);
}

}  // namespace sapiens::studio
