#include "recent_files_menu.h"

#include "recent_files.h"

#include <QAction>
#include <QDir>
#include <QMenu>

#include <utility>

namespace sapiens::studio {
namespace {

void rebuild(QMenu* menu, RecentFiles& recent, const std::function<void(const QString&)>& open) {
  menu->clear();
  const QStringList entries = recent.entries();
  for (int i = 0; i < entries.size(); ++i) {
    const QString path = entries[i];
    // &1 .. &9, &0: the digit selects the entry while the menu is open.
    const QString label = QStringLiteral("&%1  %2").arg((i + 1) % 10).arg(QDir::toNativeSeparators(path));
    QAction* action = menu->addAction(label);
    QObject::connect(action, &QAction::triggered, menu, [open, path] { open(path); });
  }
  if (entries.isEmpty()) menu->addAction(QObject::tr("(none)"))->setEnabled(false);
  menu->addSeparator();
  QAction* clear = menu->addAction(QObject::tr("&Clear Recent Files"));
  clear->setEnabled(!entries.isEmpty());
  QObject::connect(clear, &QAction::triggered, menu, [&recent] { recent.clear(); });
}

}  // namespace

QMenu* addRecentFilesMenu(QMenu* file, RecentFiles& recent, std::function<void(const QString&)> open) {
  QMenu* menu = file->addMenu(QObject::tr("&Recent Files"));
  menu->setObjectName(QStringLiteral("recentMenu"));
  QObject::connect(menu, &QMenu::aboutToShow, menu,
                   [menu, &recent, open = std::move(open)] { rebuild(menu, recent, open); });
  rebuild(menu, recent, [](const QString&) {});
  return menu;
}

}  // namespace sapiens::studio
