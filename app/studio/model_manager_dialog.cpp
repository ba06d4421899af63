#include "model_manager_dialog.h"

#include "failure_dialog.h"

#include "sapiens/common/paths.h"
#include "sapiens/model/checkpoint_locator.h"
#include "sapiens/model/task.h"
#include "sapiens/net/checkpoint_download.h"

#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <set>

namespace sapiens::studio {
namespace {

using Kind = CheckpointJobs::Kind;

QString dataSize(quint64 bytes) {
  return QLocale().formattedDataSize(static_cast<qint64>(bytes), 1, QLocale::DataSizeSIFormat);
}

QString timeLeft(double seconds) {
  if (seconds < 60) return QObject::tr("%1 s left").arg(static_cast<int>(seconds + 0.5));
  const int minutes = static_cast<int>(seconds / 60 + 0.5);
  if (minutes < 60) return QObject::tr("%1 min left").arg(minutes);
  return QObject::tr("%1 h %2 min left").arg(minutes / 60).arg(minutes % 60);
}

QString percent(quint64 part, quint64 whole) {
  return whole > 0 ? QStringLiteral("%1 %").arg(static_cast<int>(100.0 * static_cast<double>(part) / whole))
                   : dataSize(part);
}

}  // namespace

ModelManagerDialog::ModelManagerDialog(CheckpointJobs* jobs, std::vector<zoo::Entry> catalogue,
                                       const QString& root, QWidget* parent)
    : QDialog(parent),
      jobs_(jobs),
      root_(root),
      rootEdit_(new QLineEdit(root)),
      rootNote_(new QLabel),
      chooseRootButton_(new QPushButton(tr("&Change..."))),
      table_(new QTableWidget(this)),
      overallBar_(new QProgressBar),
      overallLabel_(new QLabel),
      resultLabel_(new QLabel),
      downloadButton_(new QPushButton(tr("&Download"))),
      verifyButton_(new QPushButton(tr("&Verify"))),
      removeButton_(new QPushButton(tr("&Remove"))),
      showButton_(new QPushButton(tr("Show in &Folder"))),
      cancelButton_(new QPushButton(tr("&Cancel Downloads"))) {
  setObjectName(QStringLiteral("modelManager"));
  setWindowTitle(tr("Manage Models"));
  for (zoo::Entry& e : catalogue) {
    const QString id = QString::fromStdString(e.id);
    order_.push_back(id);
    rows_[id].entry = std::move(e);
  }
  auto* rootRow = new QHBoxLayout;
  rootRow->addWidget(new QLabel(tr("Checkpoint folder:")));
  rootEdit_->setReadOnly(true);
  rootEdit_->setAccessibleName(tr("Checkpoint folder"));
  rootRow->addWidget(rootEdit_, 1);
  chooseRootButton_->setObjectName(QStringLiteral("chooseRootButton"));
  rootRow->addWidget(chooseRootButton_);
  const bool fromEnvironment = paths::checkpointRootFromEnvironment();
  chooseRootButton_->setEnabled(!fromEnvironment);
  rootNote_->setObjectName(QStringLiteral("rootNote"));
  rootNote_->setText(fromEnvironment
                         ? tr("Set by $SAPIENS_CHECKPOINT_ROOT: unset it to choose the folder here.")
                         : tr("Files go into the official layout (pose/, seg/, normal/, ...) here."));
  buildTable();
  overallBar_->setObjectName(QStringLiteral("overallProgress"));
  overallBar_->setAccessibleName(tr("Overall download progress"));
  overallLabel_->setObjectName(QStringLiteral("overallLabel"));
  resultLabel_->setObjectName(QStringLiteral("resultLabel"));
  resultLabel_->setWordWrap(true);
  resultLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {downloadButton_, verifyButton_, removeButton_, showButton_, cancelButton_})
    buttons->addWidget(b);
  buttons->addStretch(1);
  auto* close = new QDialogButtonBox(QDialogButtonBox::Close);
  buttons->addWidget(close);
  downloadButton_->setObjectName(QStringLiteral("downloadButton"));
  verifyButton_->setObjectName(QStringLiteral("verifyButton"));
  removeButton_->setObjectName(QStringLiteral("removeButton"));
  showButton_->setObjectName(QStringLiteral("showInFolderButton"));
  cancelButton_->setObjectName(QStringLiteral("cancelDownloadsButton"));
  downloadButton_->setToolTip(tr("Download the selected checkpoints (a partial download resumes)"));
  verifyButton_->setToolTip(tr("Check the selected files and compare their SHA-256 with the hub's"));
  removeButton_->setToolTip(tr("Move the selected files to the trash"));
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(rootRow);
  layout->addWidget(rootNote_);
  layout->addWidget(table_, 1);
  layout->addWidget(overallBar_);
  layout->addWidget(overallLabel_);
  layout->addWidget(resultLabel_);
  layout->addLayout(buttons);
  connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(chooseRootButton_, &QPushButton::clicked, this, &ModelManagerDialog::chooseRoot);
  connect(downloadButton_, &QPushButton::clicked, this, [this] { download(selectedIds()); });
  connect(verifyButton_, &QPushButton::clicked, this, &ModelManagerDialog::verifySelected);
  connect(removeButton_, &QPushButton::clicked, this, &ModelManagerDialog::removeSelected);
  connect(showButton_, &QPushButton::clicked, this, &ModelManagerDialog::showSelectedInFolder);
  connect(cancelButton_, &QPushButton::clicked, this, [this] {
    jobs_->cancelDownloads();
    const QStringList still = jobs_->downloadQueue();  // the running one, until it has stopped
    for (auto& [id, row] : rows_)
      if (!still.contains(id) && !row.activity.isEmpty()) {
        row.activity.clear();
        updateRow(id);
      }
  });
  connect(table_, &QTableWidget::itemSelectionChanged, this, &ModelManagerDialog::updateButtons);
  connectJobs();
  resize(980, 560);
  refresh();
}

void ModelManagerDialog::buildTable() {
  table_->setObjectName(QStringLiteral("modelTable"));
  table_->setAccessibleName(tr("Checkpoints"));
  table_->setColumnCount(6);
  table_->setHorizontalHeaderLabels(
      {tr("Checkpoint"), tr("Task"), tr("Model"), tr("Download"), tr("State"), tr("File")});
  table_->setRowCount(static_cast<int>(order_.size()));
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  table_->horizontalHeader()->setStretchLastSection(true);
  for (int r = 0; r < static_cast<int>(order_.size()); ++r) {
    const zoo::Entry& e = rows_[order_[r]].entry;
    const QString id = order_[r];
    auto* idItem = new QTableWidgetItem(id);
    idItem->setToolTip(QString::fromStdString(e.repository));
    table_->setItem(r, IdColumn, idItem);
    table_->setItem(r, TaskColumn,
                    new QTableWidgetItem(QString::fromStdString(std::string(taskName(e.task)))));
    table_->setItem(r, ModelSizeColumn, new QTableWidgetItem(QString::fromStdString(e.size)));
    for (int c : {DownloadSizeColumn, StateColumn, PathColumn}) table_->setItem(r, c, new QTableWidgetItem);
    table_->item(r, DownloadSizeColumn)->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    updateRow(id);
  }
}

// Results for another folder than the one shown (asked for before it changed) are not this table's.
void ModelManagerDialog::connectJobs() {
  connect(jobs_, &CheckpointJobs::checked, this,
          [this](const QString& id, const QString& root, int state, quint64 partial, const QString& problem) {
            Row* row = root == root_ ? rowOf(id) : nullptr;
            if (!row) return;
            row->state = static_cast<zoo::FileState>(state);
            row->partialBytes = partial;
            row->problem = problem;
            row->checked = true;
            updateRow(id);
            updateButtons();
          });
  connect(jobs_, &CheckpointJobs::probed, this,
          [this](const QString& id, qint64 bytes, const QString& sha256, const QString& error) {
            Row* row = rowOf(id);
            if (!row) return;
            row->probing = false;
            row->announcedBytes = bytes;
            row->announcedSha256 = sha256;
            row->probeError = error;
            updateRow(id);
            updateOverall();
          });
  connect(jobs_, &CheckpointJobs::progress, this,
          [this](const QString& id, const QString& root, quint64 received, quint64 total, double rate,
                 bool verifying) {
            Row* row = root == root_ ? rowOf(id) : nullptr;
            if (!row) return;
            row->received = received;
            row->total = total;
            row->activity =
                (verifying ? tr("checking SHA-256 %1") : tr("downloading %1")).arg(percent(received, total));
            if (!verifying) rate_ = rate;
            updateRow(id);
            updateOverall();
          });
  connect(jobs_, &CheckpointJobs::finished, this, &ModelManagerDialog::onFinished);
  connect(jobs_, &CheckpointJobs::downloadingChanged, this, [this](bool downloading) {
    if (!downloading) batch_.clear();
    updateOverall();
    updateButtons();
  });
}

void ModelManagerDialog::refresh() {
  for (const QString& id : order_) {
    Row& row = rows_[id];
    jobs_->enqueue(Kind::Check, row.entry, root_);
    if (row.announcedBytes < 0) {
      row.probing = true;
      jobs_->enqueue(Kind::Probe, row.entry, root_);
    }
    updateRow(id);
  }
  updateOverall();
  updateButtons();
}

void ModelManagerDialog::setRoot(const QString& root) {
  jobs_->dropWorkOutside(root);  // what was asked for the old folder is no longer wanted, nor shown
  root_ = root;
  rootEdit_->setText(root);
  for (auto& [id, row] : rows_) {
    row.state = zoo::FileState::Missing;  // "checking..." until the new folder's check comes
    row.checked = false;
    row.partialBytes = 0;
    row.problem.clear();
    row.activity.clear();
    row.received = row.total = 0;
  }
  refresh();
}

ModelManagerDialog::Row* ModelManagerDialog::rowOf(const QString& id) {
  const auto it = rows_.find(id);
  return it == rows_.end() ? nullptr : &it->second;  // another catalogue's id: not shown here
}

QString ModelManagerDialog::pathOf(const Row& row) const {
  return QString::fromStdString(zoo::installedPath(row.entry, root_.toStdString()));
}

void ModelManagerDialog::updateRow(const QString& id) {
  const auto index = std::find(order_.begin(), order_.end(), id) - order_.begin();
  const Row& row = rows_[id];
  const int r = static_cast<int>(index);
  QString size = row.announcedBytes >= 0 ? dataSize(static_cast<quint64>(row.announcedBytes))
                 : row.probing           ? tr("asking...")
                                         : tr("unknown");
  table_->item(r, DownloadSizeColumn)->setText(size);
  table_->item(r, DownloadSizeColumn)
      ->setToolTip(
          row.probeError.isEmpty()
              ? (row.announcedSha256.isEmpty() ? QString() : tr("SHA-256 %1").arg(row.announcedSha256))
              : row.probeError);
  QString state = row.activity;
  if (state.isEmpty()) {
    switch (row.state) {
      case zoo::FileState::Missing:
        state = !row.checked ? tr("checking...")
                : row.partialBytes > 0
                    ? tr("missing (%1 downloaded, resumes)").arg(dataSize(row.partialBytes))
                    : tr("missing");
        break;
      case zoo::FileState::Valid:
        state = tr("valid");
        break;
      case zoo::FileState::Invalid:
        state = tr("invalid: %1").arg(row.problem);
        break;
    }
  }
  QTableWidgetItem* stateItem = table_->item(r, StateColumn);
  stateItem->setText(state);
  stateItem->setToolTip(row.problem.isEmpty() ? state : row.problem);
  stateItem->setForeground(row.state == zoo::FileState::Invalid && row.activity.isEmpty()
                               ? QBrush(Qt::red)
                               : palette().brush(QPalette::Text));
  table_->item(r, PathColumn)->setText(pathOf(row));
  table_->item(r, PathColumn)->setToolTip(pathOf(row));
}

void ModelManagerDialog::updateOverall() {
  const QStringList queue = jobs_->downloadQueue();
  for (const QString& id : queue)
    if (!batch_.contains(id)) batch_ << id;
  overallBar_->setTextVisible(!queue.isEmpty());
  if (queue.isEmpty()) {
    overallBar_->setRange(0, 1);
    overallBar_->setValue(0);
    overallLabel_->setText(tr("No download running."));
    return;
  }
  quint64 done = 0, total = 0;
  bool sizesKnown = true;
  for (const QString& id : batch_) {
    const Row& row = rows_[id];
    const quint64 size = row.announcedBytes >= 0 ? static_cast<quint64>(row.announcedBytes) : row.total;
    sizesKnown = sizesKnown && size > 0;
    total += size;
    done += queue.contains(id) ? std::min(row.received, size > 0 ? size : row.received) : size;
  }
  const int finishedFiles = static_cast<int>(batch_.size() - queue.size());
  QString text = tr("Downloading %1 of %2: %3").arg(finishedFiles + 1).arg(batch_.size()).arg(queue.first());
  if (sizesKnown && total > 0) {
    overallBar_->setRange(0, 1000);
    overallBar_->setValue(static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)));
    text += tr(", %1 of %2").arg(dataSize(done), dataSize(total));
    if (rate_ > 0)
      text += tr(", %1/s, %2").arg(dataSize(static_cast<quint64>(rate_)), timeLeft((total - done) / rate_));
  } else {
    overallBar_->setRange(0, 0);  // busy: a size is not known
    if (rate_ > 0) text += tr(", %1/s").arg(dataSize(static_cast<quint64>(rate_)));
  }
  overallLabel_->setText(text);
}

void ModelManagerDialog::updateButtons() {
  const QStringList ids = selectedIds();
  bool present = false;
  for (const QString& id : ids) present = present || rows_[id].state != zoo::FileState::Missing;
  downloadButton_->setEnabled(!ids.isEmpty());
  verifyButton_->setEnabled(present);
  removeButton_->setEnabled(present);
  showButton_->setEnabled(true);
  cancelButton_->setEnabled(jobs_->downloading());
}

QStringList ModelManagerDialog::selectedIds() const {
  std::set<int> rowsSelected;
  for (const QTableWidgetItem* item : table_->selectedItems()) rowsSelected.insert(item->row());
  QStringList ids;
  for (int r : rowsSelected) ids << order_[static_cast<std::size_t>(r)];
  return ids;
}

void ModelManagerDialog::download(const QStringList& ids) {
  for (const QString& id : ids) {
    auto it = rows_.find(id);
    if (it == rows_.end()) continue;
    it->second.activity = tr("queued");
    it->second.received = 0;
    jobs_->enqueue(Kind::Download, it->second.entry, root_);
    updateRow(id);
  }
  updateOverall();
  updateButtons();
}

void ModelManagerDialog::verifySelected() {
  for (const QString& id : selectedIds()) {
    Row& row = rows_[id];
    if (row.state == zoo::FileState::Missing) continue;
    row.activity = tr("queued for verification");
    jobs_->enqueue(Kind::Verify, row.entry, root_);
    updateRow(id);
  }
  updateButtons();
}

void ModelManagerDialog::onFinished(const QString& id, const QString& root, CheckpointJobs::Kind kind,
                                    bool ok, bool cancelled, const QString& message) {
  Row* row = root == root_ ? rowOf(id) : nullptr;
  if (!row) return;
  row->activity.clear();
  resultLabel_->setText(message);
  updateRow(id);
  updateOverall();
  updateButtons();
  if (kind == Kind::Download && ok) Q_EMIT checkpointsChanged();
  if (ok || cancelled) return;
  showFailure(kind == Kind::Download ? tr("Download failed") : tr("Verification failed"), pathOf(*row),
              message);
}

void ModelManagerDialog::showFailure(const QString& title, const QString& file, const QString& cause) {
  studio::showFailure(this, title, file, cause);  // not modal: the downloads go on while it is shown
}

void ModelManagerDialog::removeSelected() {
  QStringList removed, failed;
  for (const QString& id : selectedIds()) {
    Row& row = rows_[id];
    const QString path = pathOf(row);
    if (!QFileInfo::exists(path)) continue;
    jobs_->cancel(Kind::Verify, id);
    bool gone = QFile::moveToTrash(path);
    if (!gone &&
        QMessageBox::question(this, tr("Remove Checkpoint"),
                              tr("This desktop has no trash for %1. Delete it permanently?").arg(path)) ==
            QMessageBox::Yes)
      gone = QFile::remove(path);
    (gone ? removed : failed) << path;
    jobs_->enqueue(Kind::Check, row.entry, root_);
  }
  if (!removed.isEmpty()) Q_EMIT checkpointsChanged();
  if (!failed.isEmpty())
    showFailure(tr("Remove failed"), failed.join(QLatin1Char('\n')), tr("The file was kept."));
}

void ModelManagerDialog::showSelectedInFolder() {
  const QStringList ids = selectedIds();
  QString folder = root_;
  if (!ids.isEmpty()) {
    const QFileInfo file(pathOf(rows_[ids.first()]));
    if (file.dir().exists()) folder = file.dir().path();
  }
  QDesktopServices::openUrl(QUrl::fromLocalFile(folder));
}

void ModelManagerDialog::chooseRoot() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Checkpoint Folder"), root_);
  if (folder.isEmpty() || folder == root_) return;
  setRoot(folder);
  Q_EMIT rootChosen(folder);
}

}  // namespace sapiens::studio
