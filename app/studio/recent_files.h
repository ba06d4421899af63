#pragma once
// The "Recent Files" list, kept in QSettings (newest first, no duplicates, at most kMaxEntries).
// Entries whose file or folder no longer exists are dropped whenever the list is read.

#include <QStringList>

namespace sapiens::studio {

class RecentFiles {
 public:
  static constexpr int kMaxEntries = 10;

  /// Existing entries, newest first; missing ones are pruned from the settings too.
  QStringList entries() const;
  void add(const QString& path);
  void clear();
};

}  // namespace sapiens::studio
