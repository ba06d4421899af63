#pragma once
// The studio's checkpoint work, one job at a time on a thread of its own so that the GUI thread never
// waits on the disk or the network: checking the files present (core's checkFile), asking the server for
// each file's size and hash, downloading (core's downloadCheckpoint, the CLI's code: resume from the
// .part file, the hub's SHA-256, the catalogue's check) and verifying a file against the hub's hash.
// Results come back as queued signals, each naming the folder it is for. A job acts on an entry in a
// checkpoint folder: a request for the same entry and folder as one queued is dropped as a duplicate (a size
// question is the server's, asked once whatever the folder). Quitting cancels the running job and waits
// at most for libcurl's next progress call (well under a second).

#include "sapiens/model/model_zoo.h"

#include <QObject>
#include <QString>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace sapiens::studio {

class CheckpointJobs : public QObject {
  Q_OBJECT

 public:
  enum class Kind { Check, Probe, Download, Verify };
  Q_ENUM(Kind)

  explicit CheckpointJobs(QObject* parent = nullptr);
  ~CheckpointJobs() override;

  /// Where the files go; "" = the Hugging Face endpoint of $HF_ENDPOINT or huggingface.co.
  void setEndpoint(const QString& endpoint);
  /// Queues `kind` for `entry` in the checkpoint folder `root`; checks, downloads and verifications go
  /// before the size questions still queued (each can wait on the network for up to 20 s).
  void enqueue(Kind kind, const zoo::Entry& entry, const QString& root);
  /// The checkpoint folder is now `root`: the queued checks, downloads and verifications of any other
  /// folder are dropped and such a job under way is cancelled (a download keeps its .part file).
  void dropWorkOutside(const QString& root);
  /// Cancels the entry's queued jobs of `kind` and the running one (a download keeps its .part file).
  void cancel(Kind kind, const QString& id);
  /// Cancels every queued download and verification and the running one.
  void cancelDownloads();
  /// Whether a download or verification is queued or running.
  bool downloading() const;
  /// Ids with a download queued or running.
  QStringList downloadQueue() const;

 Q_SIGNALS:
  /// A Check of the file in `root`: zoo::FileState as int, bytes in its .part file, why it is invalid.
  void checked(const QString& id, const QString& root, int state, quint64 partialBytes,
               const QString& problem);
  /// A Probe: the size the server announces (-1 unknown), its SHA-256 ("" unknown), or why it failed.
  void probed(const QString& id, qint64 bytes, const QString& sha256, const QString& error);
  /// A Download or Verify under way; `total` 0 while unknown; `verifying` while the hash is computed.
  void progress(const QString& id, const QString& root, quint64 received, quint64 total,
                double bytesPerSecond, bool verifying);
  /// A Download or Verify in `root` ended: `message` says what happened (the cause when it failed).
  void finished(const QString& id, const QString& root, sapiens::studio::CheckpointJobs::Kind kind, bool ok,
                bool cancelled, const QString& message);
  void downloadingChanged(bool downloading);

 private:
  struct Job {
    Kind kind;
    zoo::Entry entry;
    std::string root;

    /// Whether `other` acts on the same thing: the entry in the same folder (a probe: the entry).
    bool sameWork(const Job& other) const;
  };
  void run();
  void runJob(const Job& job);
  void check(const Job& job);
  void probe(const Job& job);
  void download(const Job& job);
  void verify(const Job& job);
  bool cancelled() const;
  bool downloadWorkQueued() const;  ///< with mutex_ held

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  std::optional<Job> running_;
  bool cancelRunning_ = false;
  bool stopping_ = false;
  bool networkDown_ = false;  // a probe failed to connect: the others are not tried
  std::string endpoint_;
  std::map<std::string, std::string> announcedSha256_;  // by id, from probes
  std::thread thread_;
};

}  // namespace sapiens::studio
