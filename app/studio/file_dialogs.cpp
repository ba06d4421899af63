#include "file_dialogs.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

namespace sapiens::studio {

QString dialogDirectory() {
  const QString last = QSettings().value(QStringLiteral("lastDirectory")).toString();
  return QFileInfo(last).isDir() ? last : QDir::homePath();
}

void rememberDialogDirectory(const QString& path) {
  const QFileInfo info(path);
  QSettings().setValue(QStringLiteral("lastDirectory"),
                       info.isDir() ? info.absoluteFilePath() : info.absolutePath());
}

}  // namespace sapiens::studio
