// kill -9 in the middle of writing: a forked child rewrites files in a loop (NPY and PLY exports, a label
// set's masks and manifest, alternating between two versions) and the parent SIGKILLs it at random moments,
// several times, checking after each kill that every file is exactly the old or the new version, never a
// mix or a prefix, and that what a crash leaves behind are hidden temporary files that no reader takes
// for results.

#include "sapiens/export/npy.h"
#include "sapiens/export/ply.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/media/image_io.h"
#include "test_support.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QDir>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QThread>
#include <QtTest>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <functional>
#include <string>
#include <vector>

using namespace sapiens;

namespace {

constexpr int kRounds = 8;

QByteArray readBytes(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// A counter the child increments after each completed write, in memory shared across fork().
class SharedCounter {
 public:
  SharedCounter()
      : value_(static_cast<std::atomic<long>*>(::mmap(
            nullptr, sizeof(std::atomic<long>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0))) {
    new (value_) std::atomic<long>(0);
  }
  SharedCounter(const SharedCounter&) = delete;
  SharedCounter& operator=(const SharedCounter&) = delete;
  ~SharedCounter() { ::munmap(value_, sizeof(std::atomic<long>)); }
  std::atomic<long>& operator*() { return *value_; }

 private:
  std::atomic<long>* value_;
};

// Forks a child that runs `write(i)` for i = 0, 1, 2, ... until it is killed, kills it with SIGKILL after
// a random delay, and calls `check(round)` (which uses QVERIFY) once it is dead. Returns the number of
// writes the children completed.
long killWhileWriting(const std::function<void(long)>& write, const std::function<void(int)>& check,
                      int maxDelayMs) {
  SharedCounter done;
  QRandomGenerator random(20240601);
  for (int round = 0; round < kRounds; ++round) {
    const pid_t child = ::fork();
    if (child == 0) {
      try {
        for (long i = *done;; ++i) {
          write(i);
          ++*done;
        }
      } catch (...) {
        ::_exit(2);
      }
    }
    if (child < 0) qFatal("fork failed");
    // Even rounds kill at a random moment (the early ones often during the child's first write); odd
    // rounds first wait for a commit, so that kills also land on a rewrite of an existing file.
    if (round % 2 == 1) {
      const long before = *done;
      for (int waited = 0; *done == before && waited < 5000; waited += 2) QThread::msleep(2);
    }
    QThread::msleep(1 + random.bounded(maxDelayMs));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
      qWarning("the writing child ended by itself (status %d), not by the kill", status);
      return -1;
    }
    check(round);
    if (QTest::currentTestFailed()) return -1;
  }
  return *done;
}

// Every file in `folder` (recursively) that is not hidden must be in `allowed`; the hidden ones must be
// AtomicFile's temporary files (".NAME.tmp-PID-RANDOM"). Returns how many of those there are.
int checkFolder(const QString& folder, const QStringList& allowed, QString& problem) {
  int temporaries = 0;
  const QDir root(folder);
  std::function<void(const QString&)> walk = [&](const QString& sub) {
    const QDir dir(root.filePath(sub));
    for (const QFileInfo& info : dir.entryInfoList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot)) {
      const QString relative = sub.isEmpty() ? info.fileName() : sub + "/" + info.fileName();
      if (info.isDir()) {
        walk(relative);
      } else if (info.fileName().startsWith('.')) {
        if (info.fileName().contains(".tmp-")) {
          ++temporaries;
        } else {
          problem = "unexpected hidden file " + relative;
        }
      } else if (!allowed.contains(relative)) {
        problem = "unexpected file " + relative;
      }
    }
  };
  walk({});
  return temporaries;
}

PointCloud cloud(std::size_t vertices, float value) {
  PointCloud c;
  c.positions.assign(vertices * 3, value);
  c.normals.assign(vertices * 3, 0.5f);
  c.colors.assign(vertices * 3, static_cast<std::uint8_t>(value * 10));
  c.pixels.resize(vertices);
  for (std::size_t i = 0; i < vertices; ++i) c.pixels[i] = static_cast<std::int32_t>(i);
  return c;
}

}  // namespace

class TestCrashSafety : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void killedExportsLeaveTheOldOrTheNewFile() {
    QTemporaryDir dir;
    const QString npyPath = dir.filePath("map.npy");
    const QString plyPath = dir.filePath("cloud.ply");
    // Two versions of each, of different sizes, a few MB so that a write takes a while.
    std::vector<float> npyA(1'500'000, 1.0f);
    std::vector<float> npyB(1'200'000, 2.0f);
    const std::string npyBytes[2] = {encodeNpy(NpyType::Float32, {npyA.size()}, npyA.data()),
                                     encodeNpy(NpyType::Float32, {npyB.size()}, npyB.data())};
    const PointCloud clouds[2] = {cloud(250'000, 1.0f), cloud(200'000, 2.0f)};
    const std::string plyBytes[2] = {encodePly(clouds[0]), encodePly(clouds[1])};

    const long writes = killWhileWriting(
        [&](long i) {
          const int v = int(i % 2);
          if (v == 0) {
            writeNpy(npyPath.toStdString(), npyA.data(), {npyA.size()});
          } else {
            writeNpy(npyPath.toStdString(), npyB.data(), {npyB.size()});
          }
          writePly(plyPath.toStdString(), clouds[v]);
        },
        [&](int round) {
          for (const auto& [path, versions] : {std::pair{npyPath, npyBytes}, std::pair{plyPath, plyBytes}}) {
            if (!QFile::exists(path)) continue;  // killed before its first commit
            const QByteArray bytes = readBytes(path);
            const bool complete = bytes == QByteArray::fromStdString(versions[0]) ||
                                  bytes == QByteArray::fromStdString(versions[1]);
            QVERIFY2(complete, qPrintable(QString("round %1: %2 is neither version (%3 bytes)")
                                              .arg(round)
                                              .arg(path)
                                              .arg(bytes.size())));
          }
          if (QFile::exists(npyPath)) QVERIFY(readNpy(npyPath.toStdString()).count() > 0);
          QString problem;
          checkFolder(dir.path(), {"map.npy", "cloud.ply"}, problem);
          QVERIFY2(problem.isEmpty(), qPrintable(problem));
        },
        120);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(writes >= 0, "the writing child ended by itself, not by the kill");
    qInfo("the children completed %ld exports", writes);
    QVERIFY2(writes > 0, "no export ever completed: the kills tested nothing but the first write");
    QVERIFY(QFile::exists(npyPath) && QFile::exists(plyPath));
  }

  // An autosaving labelling session: each save rewrites frame 0's mask and the manifest (which gains or
  // loses frame 1). After a kill the set must load, and its mask be one of the two versions.
  void killedLabelSetAutosaveLeavesALoadableSet() {
    QTemporaryDir dir;
    LabelSet labels;
    labels.folder = dir.filePath("set").toStdString();
    labels.task = Task::Seg;
    cv::Mat image(120, 160, CV_8UC3);
    cv::randu(image, 0, 255);
    for (int i = 0; i < 2; ++i) {
      FrameLabels frame;
      frame.image = image;
      frame.mask = cv::Mat(120, 160, CV_8UC1, cv::Scalar(i + 1));
      addFrame(labels, "f" + std::to_string(i), frame);
    }
    const LabelSet both = labels;
    LabelSet firstOnly = labels;
    firstOnly.frames.resize(1);
    const std::string maskPath = labels.resolve(labels.frames[0].mask);

    const long writes = killWhileWriting(
        [&](long i) {
          LabelSet set = i % 2 ? firstOnly : both;
          FrameLabels frame;
          frame.image = image;
          frame.mask = cv::Mat(120, 160, CV_8UC1, cv::Scalar(i % 2 ? 7 : 9));
          writeFrameLabels(set, 0, frame);
          saveLabelSet(set);
        },
        [&](int round) {
          LabelSet loaded;
          try {
            loaded = loadLabelSet(labels.folder);
          } catch (const std::exception& e) {
            QFAIL(qPrintable(QString("round %1: the set does not load: %2").arg(round).arg(e.what())));
          }
          QVERIFY(loaded.frames.size() == 1 || loaded.frames.size() == 2);
          const cv::Mat mask = cv::imread(maskPath, cv::IMREAD_UNCHANGED);
          QVERIFY2(!mask.empty() && mask.size() == cv::Size(160, 120),
                   qPrintable(QString("round %1: the mask does not read").arg(round)));
          double low = 0, high = 0;
          cv::minMaxLoc(mask, &low, &high);
          QVERIFY2(low == high && (low == 1 || low == 7 || low == 9),
                   qPrintable(QString("round %1: mask values %2..%3").arg(round).arg(low).arg(high)));
          QString problem;
          QStringList allowed{QString::fromLatin1(kLabelSetManifest)};
          for (const LabelledFrame& f : both.frames)
            allowed << QString::fromStdString(f.image) << QString::fromStdString(f.mask);
          const int temporaries = checkFolder(QString::fromStdString(labels.folder), allowed, problem);
          QVERIFY2(problem.isEmpty(), qPrintable(problem));
          // A crash's leftovers are invisible to the readers of the folder.
          for (const char* sub : {"images", "masks"}) {
            const auto listed = listImages(labels.folder + "/" + sub, false);
            for (const std::string& path : listed)
              QVERIFY2(path.find(".tmp-") == std::string::npos, path.c_str());
          }
          Q_UNUSED(temporaries);
        },
        60);
    if (QTest::currentTestFailed()) return;
    QVERIFY2(writes >= 0, "the writing child ended by itself, not by the kill");
    qInfo("the children completed %ld autosaves", writes);
    QVERIFY2(writes > 0, "no autosave ever completed");
  }
};

QTEST_APPLESS_MAIN(TestCrashSafety)
#include "test_crash_safety.moc"
