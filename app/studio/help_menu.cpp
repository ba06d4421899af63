#include "help_menu.h"

#include "sapiens/common/log.h"
#include "sapiens/common/version.h"

#include <vtkVersion.h>
#include <opencv2/core/version.hpp>

#include <QAction>
#include <QDesktopServices>
#include <QDir>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QUrl>

namespace sapiens::studio {
namespace {

void showAbout(QWidget* window) {
  QString components;
  auto row = [&components](const QString& name, const QString& version) {
    components +=
        QStringLiteral("<tr><td>%1</td><td>%2</td></tr>").arg(name.toHtmlEscaped(), version.toHtmlEscaped());
  };
  for (const auto& [name, version] : componentVersions()) {
    row(QString::fromStdString(name), QString::fromStdString(version));
  }
  row(QStringLiteral("Qt"), QString::fromLatin1(qVersion()));
  row(QStringLiteral("VTK"), QString::fromLatin1(vtkVersion::GetVTKVersion()));
  row(QStringLiteral("OpenCV"), QStringLiteral(CV_VERSION));
  QMessageBox::about(
      window, QObject::tr("About Sapiens2 Studio"),
      QObject::tr(
          "<h3>Sapiens2 Studio %1</h3><p>Meta's Sapiens2 human-centric vision models: pose, body-part "
          "segmentation, surface normals, albedo and pointmaps.</p><table>%2</table>")
          .arg(QString::fromStdString(versionString()).toHtmlEscaped(), components));
}

void openLogFolder(QMainWindow* window) {
  const QString folder = QString::fromStdString(log::logDirectory());
  QDir().mkpath(folder);
  if (!QDesktopServices::openUrl(QUrl::fromLocalFile(folder))) {
    window->statusBar()->showMessage(QObject::tr("Log folder: %1").arg(folder), 10000);
    logger().warn("no file manager to open the log folder {}", folder.toStdString());
  }
}

}  // namespace

void addHelpMenu(QMainWindow* window) {
  QMenu* help = window->menuBar()->addMenu(QObject::tr("&Help"));
  help->setObjectName(QStringLiteral("helpMenu"));
  QAction* about = help->addAction(QObject::tr("&About Sapiens2 Studio"));
  about->setObjectName(QStringLiteral("actionAbout"));
  about->setShortcut(QKeySequence::HelpContents);
  QObject::connect(about, &QAction::triggered, window, [window] { showAbout(window); });
  QAction* logs = help->addAction(QObject::tr("Open &Log Folder"));
  logs->setObjectName(QStringLiteral("actionOpenLogFolder"));
  logs->setShortcut(QKeySequence(QObject::tr("Ctrl+Alt+G")));
  QObject::connect(logs, &QAction::triggered, window, [window] { openLogFolder(window); });
}

}  // namespace sapiens::studio
