#include "help_menu.h"

#include "sapiens/common/log.h"
#include "sapiens/common/version.h"

#include <vtkVersion.h>
#include <opencv2/core/version.hpp>

#include <QAction>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QHeaderView>
#include <QMainWindow>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>
#include <utility>
#include <vector>

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

// Keys that work inside a view rather than through a menu.
const std::pair<const char*, const char*> kViewKeys[] = {
    {"3-D view: reset the camera", "R"},
    {"3-D view: rotate / pan / zoom", "Left drag / Shift+left or middle drag / wheel"},
    {"Picture view: pan / zoom", "Drag / wheel"},
    {"Label canvas: remove the keypoint under the cursor", "Delete"},
    {"Label canvas: keypoint visible / hidden", "V"},
};

void showShortcuts(QMainWindow* window) {
  if (auto* shown = window->findChild<QDialog*>(QStringLiteral("shortcutsDialog"))) return shown->raise();
  std::vector<std::pair<QString, QString>> rows;
  for (QAction* action : window->findChildren<QAction*>()) {
    if (action->shortcut().isEmpty()) continue;
    const std::pair<QString, QString> row{
        action->text().remove(QLatin1Char('&')).remove(QStringLiteral("...")),
        action->shortcut().toString(QKeySequence::NativeText)};
    if (std::find(rows.begin(), rows.end(), row) == rows.end()) rows.push_back(row);
  }
  std::sort(rows.begin(), rows.end());
  for (const auto& [what, keys] : kViewKeys) rows.emplace_back(QObject::tr(what), QObject::tr(keys));
  auto* dialog = new QDialog(window);
  dialog->setObjectName(QStringLiteral("shortcutsDialog"));
  dialog->setWindowTitle(QObject::tr("Keyboard Shortcuts"));
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  auto* table = new QTableWidget(int(rows.size()), 2, dialog);
  table->setObjectName(QStringLiteral("shortcutsTable"));
  table->setAccessibleName(QObject::tr("Keyboard shortcuts"));
  table->setHorizontalHeaderLabels({QObject::tr("Action"), QObject::tr("Keys")});
  table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table->verticalHeader()->hide();
  table->horizontalHeader()->setStretchLastSection(true);
  for (int r = 0; r < int(rows.size()); ++r) {
    table->setItem(r, 0, new QTableWidgetItem(rows[std::size_t(r)].first));
    table->setItem(r, 1, new QTableWidgetItem(rows[std::size_t(r)].second));
  }
  table->resizeColumnsToContents();
  auto* layout = new QVBoxLayout(dialog);
  layout->addWidget(table);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  QObject::connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
  layout->addWidget(buttons);
  dialog->resize(560, 620);
  dialog->show();
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
  QAction* keys = help->addAction(QObject::tr("&Keyboard Shortcuts"));
  keys->setObjectName(QStringLiteral("actionKeyboardShortcuts"));
  keys->setShortcut(QKeySequence(QObject::tr("Ctrl+/")));
  QObject::connect(keys, &QAction::triggered, window, [window] { showShortcuts(window); });
}

}  // namespace sapiens::studio
