#pragma once
// File > Recent Files: the RecentFiles entries, numbered (&1 .. &0), rebuilt each time it opens, and
// "Clear Recent Files".

#include <QString>

#include <functional>

class QMenu;

namespace sapiens::studio {

class RecentFiles;

/// Adds the menu to `file`; `open` is called with the entry chosen. `recent` must outlive the menu.
QMenu* addRecentFilesMenu(QMenu* file, RecentFiles& recent, std::function<void(const QString&)> open);

}  // namespace sapiens::studio
