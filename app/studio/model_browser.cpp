#include "model_browser.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QHeaderView>
#include <QLocale>

namespace sapiens::studio {
namespace {

QStringList checkpointsUnder(const QString& folder, bool recursive) {
  QStringList files;
  const QDirIterator::IteratorFlags flags =
      recursive ? QDirIterator::Subdirectories | QDirIterator::FollowSymlinks : QDirIterator::IteratorFlags();
  QDirIterator it(folder, {QStringLiteral("*.safetensors")}, QDir::Files | QDir::Readable, flags);
  while (it.hasNext()) files << it.next();
  files.sort();
  return files;
}

}  // namespace

ModelBrowser::ModelBrowser(QWidget* parent) : QTreeWidget(parent) {
  setObjectName(QStringLiteral("modelBrowser"));
  setAccessibleName(tr("Checkpoints found"));
  setColumnCount(2);
  setHeaderLabels({tr("Checkpoint"), tr("Size")});
  header()->setSectionResizeMode(0, QHeaderView::Stretch);
  header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  header()->setStretchLastSection(false);
  setRootIsDecorated(true);
}

void ModelBrowser::setRoot(const QString& root) {
  root_ = root;
  refresh();
}

void ModelBrowser::refresh() {
  clear();
  checkpointCount_ = 0;
  auto* top = new QTreeWidgetItem(this, {root_});
  top->setToolTip(0, root_);
  const QDir rootDir(root_);
  if (!rootDir.exists()) {
    auto* missing = new QTreeWidgetItem(top, {tr("Folder not found. Download checkpoints here, or set "
                                                 "SAPIENS_CHECKPOINT_ROOT.")});
    missing->setForeground(0, palette().brush(QPalette::Disabled, QPalette::Text));
    expandAll();
    return;
  }
  const QLocale locale;
  auto addFiles = [&](QTreeWidgetItem* parent, const QString& folder, const QStringList& files) {
    for (const QString& file : files) {
      const QFileInfo info(file);
      auto* entry = new QTreeWidgetItem(
          parent, {QDir(folder).relativeFilePath(file), locale.formattedDataSize(info.size(), 1)});
      entry->setToolTip(0, file);
      entry->setData(0, Qt::UserRole, file);
      entry->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
      ++checkpointCount_;
    }
  };
  addFiles(top, root_, checkpointsUnder(root_, false));
  const QStringList tasks = rootDir.entryList(QDir::Dirs | QDir::NoDotAndDotDot | QDir::Readable, QDir::Name);
  for (const QString& task : tasks) {
    const QString folder = rootDir.filePath(task);
    const QStringList files = checkpointsUnder(folder, true);
    auto* taskItem =
        new QTreeWidgetItem(top, {task, files.isEmpty() ? tr("none") : QString::number(files.size())});
    taskItem->setToolTip(0, folder);
    taskItem->setTextAlignment(1, Qt::AlignRight | Qt::AlignVCenter);
    addFiles(taskItem, folder, files);
  }
  if (checkpointCount_ == 0) {
    auto* none = new QTreeWidgetItem(top, {tr("No .safetensors files found.")});
    none->setForeground(0, palette().brush(QPalette::Disabled, QPalette::Text));
  }
  expandAll();
}

}  // namespace sapiens::studio
