#include "checkpoint_jobs.h"

#include "thread_priority.h"

#include "sapiens/common/log.h"
#include "sapiens/net/checkpoint_download.h"
#include "sapiens/net/sha256.h"

#include <QStringList>

#include <algorithm>

namespace sapiens::studio {
namespace {

// Downloads and verifications: what the user asked for, shown as download work (progress, quit dialog).
bool isDownloadWork(CheckpointJobs::Kind kind) {
  return kind == CheckpointJobs::Kind::Download || kind == CheckpointJobs::Kind::Verify;
}

// Jobs whose result depends on the checkpoint folder: all but the size questions (the server's).
bool actsOnFolder(CheckpointJobs::Kind kind) {
  return kind != CheckpointJobs::Kind::Probe;
}

}  // namespace

bool CheckpointJobs::Job::sameWork(const Job& other) const {
  return kind == other.kind && entry.id == other.entry.id && (!actsOnFolder(kind) || root == other.root);
}

bool CheckpointJobs::downloadWorkQueued() const {
  return std::any_of(queue_.begin(), queue_.end(), [](const Job& j) { return isDownloadWork(j.kind); });
}

CheckpointJobs::CheckpointJobs(QObject* parent) : QObject(parent) {
  thread_ = std::thread([this] { run(); });
}

CheckpointJobs::~CheckpointJobs() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    cancelRunning_ = true;
    queue_.clear();
  }
  wake_.notify_all();
  thread_.join();
}

void CheckpointJobs::setEndpoint(const QString& endpoint) {
  std::lock_guard<std::mutex> lock(mutex_);
  endpoint_ = endpoint.toStdString();
  networkDown_ = false;
}

void CheckpointJobs::enqueue(Kind kind, const zoo::Entry& entry, const QString& root) {
  bool startsDownloading = false;
  Job job{kind, entry, root.toStdString()};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (std::any_of(queue_.begin(), queue_.end(), [&](const Job& j) { return j.sameWork(job); })) return;
    if (kind == Kind::Probe &&
        std::none_of(queue_.begin(), queue_.end(), [](const Job& j) { return j.kind == Kind::Probe; }))
      networkDown_ = false;  // asked again: try the network again
    const bool wasDownloading = (running_ && isDownloadWork(running_->kind)) || downloadWorkQueued();
    startsDownloading = isDownloadWork(kind) && !wasDownloading;
    // What the user asked for and the checks of the disk go before the size questions still queued (23
    // of them on opening).
    const auto at = kind != Kind::Probe ? std::find_if(queue_.begin(), queue_.end(),
                                                       [](const Job& j) { return j.kind == Kind::Probe; })
                                        : queue_.end();
    queue_.insert(at, std::move(job));
  }
  wake_.notify_one();
  if (startsDownloading) Q_EMIT downloadingChanged(true);
}

void CheckpointJobs::dropWorkOutside(const QString& root) {
  bool stopsDownloading = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::string folder = root.toStdString();
    const auto elsewhere = [&](const Job& j) { return actsOnFolder(j.kind) && j.root != folder; };
    const bool wereQueued = downloadWorkQueued();
    queue_.erase(std::remove_if(queue_.begin(), queue_.end(), elsewhere), queue_.end());
    if (running_ && elsewhere(*running_)) cancelRunning_ = true;
    const bool running = running_ && isDownloadWork(running_->kind);  // its end says it
    stopsDownloading = wereQueued && !downloadWorkQueued() && !running;
  }
  if (stopsDownloading) Q_EMIT downloadingChanged(false);
}

void CheckpointJobs::cancel(Kind kind, const QString& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string key = id.toStdString();
  queue_.erase(std::remove_if(queue_.begin(), queue_.end(),
                              [&](const Job& j) { return j.kind == kind && j.entry.id == key; }),
               queue_.end());
  if (running_ && running_->kind == kind && running_->entry.id == key) cancelRunning_ = true;
}

void CheckpointJobs::cancelDownloads() {
  bool stopsDownloading = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool wereQueued = downloadWorkQueued();
    queue_.erase(
        std::remove_if(queue_.begin(), queue_.end(), [](const Job& j) { return isDownloadWork(j.kind); }),
        queue_.end());
    const bool running = running_ && isDownloadWork(running_->kind);
    if (running) cancelRunning_ = true;  // its end says downloadingChanged(false)
    stopsDownloading = wereQueued && !running;
  }
  if (stopsDownloading) Q_EMIT downloadingChanged(false);
}

bool CheckpointJobs::downloading() const {
  return !downloadQueue().isEmpty();
}

QStringList CheckpointJobs::downloadQueue() const {
  std::lock_guard<std::mutex> lock(mutex_);
  QStringList ids;
  if (running_ && isDownloadWork(running_->kind)) ids << QString::fromStdString(running_->entry.id);
  for (const Job& j : queue_)
    if (isDownloadWork(j.kind)) ids << QString::fromStdString(j.entry.id);
  return ids;
}

bool CheckpointJobs::cancelled() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return cancelRunning_;
}

void CheckpointJobs::run() {
  runInBackgroundPriority();
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = queue_.front();
      queue_.pop_front();
      running_ = job;
      cancelRunning_ = false;
    }
    runJob(job);
    bool stillDownloading = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_.reset();
      stillDownloading = downloadWorkQueued();
      if (stopping_) return;
    }
    if (isDownloadWork(job.kind) && !stillDownloading) Q_EMIT downloadingChanged(false);
  }
}

void CheckpointJobs::runJob(const Job& job) {
  try {
    switch (job.kind) {
      case Kind::Check:
        return check(job);
      case Kind::Probe:
        return probe(job);
      case Kind::Download:
        return download(job);
      case Kind::Verify:
        return verify(job);
    }
  } catch (const std::exception& e) {
    // Anything unforeseen ends this job, never the thread.
    logger().error("{}: {}", job.entry.id, e.what());
    if (isDownloadWork(job.kind))
      Q_EMIT finished(QString::fromStdString(job.entry.id), QString::fromStdString(job.root), job.kind, false,
                      false, QString::fromStdString(e.what()));
  }
}

void CheckpointJobs::check(const Job& job) {
  const zoo::FileCheck c = zoo::checkInstalled(job.entry, job.root);
  Q_EMIT checked(QString::fromStdString(job.entry.id), QString::fromStdString(job.root),
                 static_cast<int>(c.state), zoo::partialBytes(job.entry, job.root),
                 QString::fromStdString(c.problem));
}

void CheckpointJobs::probe(const Job& job) {
  const QString id = QString::fromStdString(job.entry.id);
  std::string endpoint;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (networkDown_) return Q_EMIT probed(id, -1, QString(), tr("the server could not be reached"));
    endpoint = endpoint_;
  }
  try {
    const RemoteFile remote = zoo::probeCheckpoint(job.entry, endpoint, [this] { return cancelled(); });
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!remote.sha256.empty()) announcedSha256_[job.entry.id] = remote.sha256;
    }
    Q_EMIT probed(id, remote.bytes ? static_cast<qint64>(*remote.bytes) : -1,
                  QString::fromStdString(remote.sha256), QString());
  } catch (const DownloadError& e) {
    if (e.kind() == DownloadError::Kind::Cancelled) return;
    if (e.kind() != DownloadError::Kind::Http) {
      std::lock_guard<std::mutex> lock(mutex_);
      networkDown_ = true;
    }
    logger().warn("{}", e.what());
    Q_EMIT probed(id, -1, QString(), QString::fromStdString(e.what()));
  }
}

void CheckpointJobs::download(const Job& job) {
  const QString id = QString::fromStdString(job.entry.id);
  const QString root = QString::fromStdString(job.root);
  zoo::CheckpointDownload d;
  d.entry = &job.entry;
  d.root = job.root;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    d.endpoint = endpoint_;
  }
  d.isCancelled = [this] { return cancelled(); };
  d.onProgress = [this, id, root](const DownloadProgress& p) {
    Q_EMIT progress(id, root, p.received, p.total.value_or(0), p.bytesPerSecond, p.verifying);
  };
  try {
    const zoo::CheckpointDownloadResult r = zoo::downloadCheckpoint(d);
    const QString message =
        r.alreadyPresent ? tr("%1 is already present and valid").arg(QString::fromStdString(r.path))
        : r.download.sha256.empty()
            ? tr("Downloaded %1 (the server announced no SHA-256)").arg(QString::fromStdString(r.path))
            : tr("Downloaded %1, SHA-256 as the server announced").arg(QString::fromStdString(r.path));
    Q_EMIT finished(id, root, Kind::Download, true, false, message);
  } catch (const DownloadError& e) {
    Q_EMIT finished(id, root, Kind::Download, false, e.kind() == DownloadError::Kind::Cancelled,
                    QString::fromStdString(e.what()));
  }
  check(job);
}

void CheckpointJobs::verify(const Job& job) {
  const QString id = QString::fromStdString(job.entry.id);
  const QString root = QString::fromStdString(job.root);
  const zoo::FileCheck c = zoo::checkInstalled(job.entry, job.root);
  if (c.state != zoo::FileState::Valid) {
    Q_EMIT finished(id, root, Kind::Verify, false, false,
                    c.state == zoo::FileState::Missing
                        ? tr("%1 is not there").arg(QString::fromStdString(c.path))
                        : QString::fromStdString(c.problem));
    return check(job);
  }
  std::string announced;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = announcedSha256_.find(job.entry.id);
    if (it != announcedSha256_.end()) announced = it->second;
  }
  const std::optional<std::string> hash = sha256OfFile(
      c.path, [&](std::uint64_t done) { Q_EMIT progress(id, root, done, c.bytes, 0, true); },
      [this] { return cancelled(); });
  if (!hash) return Q_EMIT finished(id, root, Kind::Verify, false, true, tr("Verification cancelled"));
  const QString path = QString::fromStdString(c.path);
  const QString actual = QString::fromStdString(*hash);
  if (announced.empty())
    Q_EMIT finished(id, root, Kind::Verify, true, false,
                    tr("%1 is valid; SHA-256 %2 (the server's hash is not known)").arg(path, actual));
  else if (*hash == announced)
    Q_EMIT finished(id, root, Kind::Verify, true, false,
                    tr("%1 is valid; its SHA-256 is the hub's: %2").arg(path, actual));
  else
    Q_EMIT finished(id, root, Kind::Verify, false, false,
                    tr("%1: its SHA-256 is %2 but the hub announces %3")
                        .arg(path, actual, QString::fromStdString(announced)));
  check(job);
}

}  // namespace sapiens::studio
