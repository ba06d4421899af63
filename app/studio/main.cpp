// sapiens-studio: the desktop front end.

#include "app_icon.h"
#include "image_view.h"
#include "main_window.h"
#include "surface_format.h"
#include "tasks_panel.h"

#include "sapiens/common/allocator.h"
#include "sapiens/common/blas_kernels.h"
#include "sapiens/common/log.h"
#include "sapiens/common/paths.h"
#include "sapiens/common/threads.h"
#include "sapiens/common/version.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDialog>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QTimer>

#include <cstdio>
#include <cstring>

namespace {

// Answered before QApplication exists, so that it works without a display.
bool wantsVersion(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--version") == 0) return true;
  }
  return false;
}

// What --screenshot grabs: the window (its 2-D view from its own framebuffer once more: QWidget::grab
// leaves out the QPainter pass that draws keypoints and boxes over the GL picture under Xvfb with Mesa),
// or the Manage Models dialog.
QImage screenshotOf(sapiens::studio::MainWindow& window, bool modelManager) {
  if (modelManager) {
    auto* dialog = window.findChild<QDialog*>(QStringLiteral("modelManager"));
    return dialog ? dialog->grab().toImage() : QImage();
  }
  QImage shot = window.grab().toImage();
  sapiens::widgets::ImageView* view = window.imageView();
  if (view->isVisible()) {
    QPainter painter(&shot);
    painter.drawImage(QRect(view->mapTo(&window, QPoint(0, 0)), view->size()), view->grabFramebuffer());
  }
  return shot;
}

// --screenshot: grab the window (or with `modelManager`, Manage Models opened once the picture is shown)
// once the first image (or with --run, its results) is on screen and a moment has passed for the 3-D view,
// the first-run banner or the dialog's checks, then quit.
void armScreenshot(sapiens::studio::MainWindow& window, const QString& path, bool afterResults,
                   bool modelManager) {
  auto grab = [&window, path, modelManager] {
    const QImage shot = screenshotOf(window, modelManager);
    QDir().mkpath(QFileInfo(path).absolutePath());
    if (shot.isNull() || !shot.save(path, "PNG")) {
      sapiens::logger().error("cannot write the screenshot {}", path.toStdString());
      QCoreApplication::exit(1);
      return;
    }
    sapiens::logger().info("screenshot {} ({}x{})", path.toStdString(), shot.width(), shot.height());
    QCoreApplication::exit(0);
  };
  auto later = [&window, grab, modelManager] {
    if (modelManager) window.showModelManager();
    QTimer::singleShot(modelManager ? 3000 : 1500, &window, grab);
  };
  if (afterResults) {
    QObject::connect(&window, &sapiens::studio::MainWindow::resultShown, &window, later);
    QObject::connect(&window, &sapiens::studio::MainWindow::runFailed, &window,
                     [] { QCoreApplication::exit(1); });
  } else {
    QObject::connect(&window, &sapiens::studio::MainWindow::imageShown, &window, later);
  }
  QObject::connect(&window, &sapiens::studio::MainWindow::imageFailed, &window,
                   [] { QCoreApplication::exit(1); });
  QTimer::singleShot(120000, &window, [] {
    sapiens::logger().error("screenshot: no image was shown within 120 s");
    QCoreApplication::exit(1);
  });
}

void addOptions(QCommandLineParser& parser) {
  parser.setApplicationDescription(
      QStringLiteral("Sapiens2 Studio - Meta's Sapiens2 human-centric vision models"));
  parser.addHelpOption();
  parser.addOption({QStringLiteral("version"), QStringLiteral("Print the version and exit.")});
  parser.addOption({{QStringLiteral("v"), QStringLiteral("verbose")}, QStringLiteral("Log debug messages.")});
  parser.addOption({QStringLiteral("threads"),
                    QStringLiteral("CPU threads for inference (default: all cores)."), QStringLiteral("N"),
                    QStringLiteral("0")});
  parser.addOption(
      {QStringLiteral("screenshot"),
       QStringLiteral("Once the first image is shown, save the window as a PNG to PATH and quit."),
       QStringLiteral("PATH")});
  parser.addOption({QStringLiteral("screenshot-of"),
                    QStringLiteral("What --screenshot saves: window (default) or models (Manage Models)."),
                    QStringLiteral("WHAT"), QStringLiteral("window")});
  parser.addOption({QStringLiteral("model"),
                    QStringLiteral("Load PATH as the TASK model (seg, pose, normal, albedo, pointmap); "
                                   "repeatable."),
                    QStringLiteral("TASK=PATH")});
  parser.addOption({QStringLiteral("task"),
                    QStringLiteral("Check these tasks in the Tasks dock, comma-separated (default: the tasks "
                                   "of --model, else seg,pose). A task without --model uses the checkpoint "
                                   "found in the checkpoint folder, else none (or --demo-weights)."),
                    QStringLiteral("LIST")});
  parser.addOption({QStringLiteral("demo-weights"),
                    QStringLiteral("Run the untrained demo weights for tasks without a checkpoint (this "
                                   "session; Models > Use Demo Weights keeps it on).")});
  parser.addOption({QStringLiteral("run"),
                    QStringLiteral("Run the checked tasks (--task, --model) on every image as it opens.")});
  parser.addPositionalArgument(
      QStringLiteral("paths"),
      QStringLiteral("Image files or folders to open (default: the bundled sample)."),
      QStringLiteral("[FILE_OR_FOLDER...]"));
}

}  // namespace

int main(int argc, char** argv) {
  sapiens::threads::ensureThreadPoolWaitPolicy(argc, argv);
  sapiens::memory::keepLargeBlocksInHeap();
  if (wantsVersion(argc, argv)) {
    std::printf("sapiens-studio %s\n", sapiens::versionString().c_str());
    return 0;
  }

  sapiens::studio::prepareOpenGl();
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("sapiens2-studio"));
  QApplication::setApplicationName(QStringLiteral("sapiens-studio"));
  QApplication::setApplicationDisplayName(QStringLiteral("Sapiens2 Studio"));
  QApplication::setApplicationVersion(QString::fromStdString(sapiens::versionString()));
  QApplication::setWindowIcon(sapiens::studio::studioIcon());
  QGuiApplication::setDesktopFileName(QStringLiteral("sapiens-studio"));

  QCommandLineParser parser;
  addOptions(parser);
  parser.process(app);

  sapiens::log::Options logOptions;
  logOptions.console =
      parser.isSet(QStringLiteral("verbose")) ? sapiens::log::Level::Debug : sapiens::log::Level::Info;
  sapiens::log::init(logOptions);
  const int threads = sapiens::threads::configure(parser.value(QStringLiteral("threads")).toInt());
  sapiens::logger().info("sapiens-studio {} on CPU, {} threads", sapiens::versionString(), threads);

  QStringList paths = parser.positionalArguments();
  if (paths.isEmpty()) {
    paths << QString::fromStdString(sapiens::paths::resourceDir() + "/samples/astronaut.png");
  }

  sapiens::studio::MainWindow window;
  // After the window exists, so that its log panel shows it.
  if (const std::string slow = sapiens::blas::slowKernelsWarning(); !slow.empty())
    sapiens::logger().warn("{}", slow);
  const bool run = parser.isSet(QStringLiteral("run"));
  if (parser.isSet(QStringLiteral("screenshot")))
    armScreenshot(window, parser.value(QStringLiteral("screenshot")), run,
                  parser.value(QStringLiteral("screenshot-of")) == QStringLiteral("models"));
  const QStringList models = parser.values(QStringLiteral("model"));
  for (sapiens::Task task : sapiens::headTasksInRunOrder()) window.tasksPanel()->setTaskSelected(task, false);
  for (const QString& spec : models) {
    const auto task = sapiens::parseTask(spec.section(QLatin1Char('='), 0, 0).toStdString());
    const QString path = spec.section(QLatin1Char('='), 1);
    if (!task || path.isEmpty()) {
      std::fprintf(stderr, "sapiens-studio: --model expects TASK=PATH, got %s\n", qPrintable(spec));
      return 2;
    }
    window.loadCheckpoint(*task, path);
    window.tasksPanel()->setTaskSelected(*task, true);
  }
  if (parser.isSet(QStringLiteral("task"))) {
    for (const QString& name :
         parser.value(QStringLiteral("task")).split(QLatin1Char(','), Qt::SkipEmptyParts)) {
      const auto task = sapiens::parseTask(name.trimmed().toStdString());
      if (!task || *task == sapiens::Task::Backbone) {
        std::fprintf(stderr, "sapiens-studio: --task takes seg, pose, normal, albedo, pointmap; got %s\n",
                     qPrintable(name));
        return 2;
      }
      window.tasksPanel()->setTaskSelected(*task, true);
    }
  } else if (models.isEmpty()) {
    window.tasksPanel()->setTaskSelected(sapiens::Task::Seg, true);
    window.tasksPanel()->setTaskSelected(sapiens::Task::Pose, true);
  }
  if (parser.isSet(QStringLiteral("demo-weights"))) window.useDemoWeights();
  window.tasksPanel()->setRunsOnOpen(run);
  window.show();
  window.openPaths(paths);
  return app.exec();
}
