// kill -9 of the real sapiens-cli while `run` writes its results over those of an earlier run: the output
// folder holds the results of pictures A (an earlier run), the new run writes those of pictures B under
// the same names, and it is killed at different moments of its exports. Afterwards every result file must
// be byte for byte A's or B's version, never a mix or a prefix; what a kill leaves behind besides them
// are hidden temporary files. The run's manifest is either A's or a complete new one.

#include "test_support.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QDir>
#include <QDirIterator>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <map>

#include <sys/stat.h>

using sapiens::test::describe;
using sapiens::test::fixture;
using sapiens::test::resource;
using sapiens::test::runCli;

namespace {

constexpr int kRounds = 5;
const QString kManifest = QStringLiteral("results.json");

// Every file under `folder`, by relative path, with its bytes; hidden files (temporaries) apart.
std::map<QString, QByteArray> filesUnder(const QString& folder, QStringList* hidden = nullptr) {
  std::map<QString, QByteArray> files;
  QDirIterator it(folder, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    const QString relative = QDir(folder).relativeFilePath(path);
    if (it.fileName().startsWith('.')) {
      if (hidden) hidden->push_back(relative);
      continue;
    }
    QFile file(path);
    if (file.open(QIODevice::ReadOnly)) files[relative] = file.readAll();
  }
  return files;
}

// Inode of every file under `folder`: an atomic rename gives a replaced file a new one, so a poll can
// count the run's finished exports without reading them.
std::map<QString, ino_t> inodesUnder(const QString& folder) {
  std::map<QString, ino_t> inodes;
  QDirIterator it(folder, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) == 0)
      inodes[QDir(folder).relativeFilePath(path)] = info.st_ino;
  }
  return inodes;
}

void copyFolder(const QString& from, const QString& to) {
  for (const auto& [relative, bytes] : filesUnder(from)) {
    const QString target = QDir(to).filePath(relative);
    QDir().mkpath(QFileInfo(target).path());
    QFile file(target);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    QCOMPARE(file.write(bytes), bytes.size());
  }
}

QStringList runArguments(const QString& pictures, const QString& output) {
  QStringList args{"run", pictures, "--output", output, "--task", "seg,normal,pointmap", "--device", "cpu"};
  for (const char* task : {"seg", "normal", "pointmap"})
    args << QString("--%1-model").arg(task)
         << QString::fromStdString(fixture(std::string("golden/") + task + "/model.safetensors"));
  return args;
}

}  // namespace

class CliKilledRunTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void killedRunLeavesOldOrNewFiles() {
    QTemporaryDir dir;
    const QString picturesA = dir.filePath("a"), picturesB = dir.filePath("b");
    QVERIFY(QDir().mkpath(picturesA) && QDir().mkpath(picturesB));
    const cv::Mat sample = cv::imread(resource("samples/astronaut.png"), cv::IMREAD_COLOR);
    QVERIFY(!sample.empty());
    for (int i = 0; i < 3; ++i) {
      // Same names, different pictures: A's are mirrored and shifted, so every result differs.
      cv::Mat a, b = sample;
      cv::flip(sample, a, 1);
      a = a(cv::Rect(8 * i, 0, sample.cols - 8 * i, sample.rows)).clone();
      const std::string name = "picture" + std::to_string(i) + ".png";
      QVERIFY(cv::imwrite(QDir(picturesA).filePath(QString::fromStdString(name)).toStdString(), a));
      QVERIFY(cv::imwrite(QDir(picturesB).filePath(QString::fromStdString(name)).toStdString(), b));
    }
    const QString outA = dir.filePath("out-a"), outB = dir.filePath("out-b");
    const auto refA = runCli(runArguments(picturesA, outA));
    QVERIFY2(refA.exitCode == 0, qPrintable(describe(refA)));
    QElapsedTimer fullRun;
    fullRun.start();
    const auto refB = runCli(runArguments(picturesB, outB));
    QVERIFY2(refB.exitCode == 0, qPrintable(describe(refB)));
    const qint64 fullRunMs = fullRun.elapsed();
    const std::map<QString, QByteArray> filesA = filesUnder(outA), filesB = filesUnder(outB);
    QVERIFY(filesA.size() > 20);
    QCOMPARE(filesA.size(), filesB.size());
    for (const auto& [name, bytes] : filesA) {
      QVERIFY2(filesB.count(name), qPrintable(name));
      if (name != kManifest)
        QVERIFY2(filesB.at(name) != bytes, qPrintable(name + " is the same for A and B"));
    }

    // Kill at the moment the k-th result file of the new run appears (plus up to 40 ms), k spread over
    // the run and leaving at least a picture's worth of files to come, so that the kills land inside the
    // run, most of them inside a picture's burst of exports.
    QRandomGenerator random(20261201);
    int mixedRounds = 0;
    for (int round = 0; round < kRounds; ++round) {
      const QString work = dir.filePath(QString("work-%1").arg(round));
      copyFolder(outA, work);
      const std::map<QString, ino_t> copied = inodesUnder(work);
      const int killAfter = 1 + round * int(filesA.size() - 10) / (kRounds - 1);
      QProcess process;
      process.start(QString::fromUtf8(SAPIENS_CLI_PATH), runArguments(picturesB, work));
      QVERIFY(process.waitForStarted());
      QElapsedTimer waited;
      waited.start();
      while (process.state() == QProcess::Running && waited.elapsed() < 4 * fullRunMs + 60000) {
        int replaced = 0;
        for (const auto& [name, inode] : inodesUnder(work))
          if (name != kManifest && copied.count(name) && copied.at(name) != inode) ++replaced;
        if (replaced >= killAfter) break;
        process.waitForFinished(5);  // a poll that also notices the run ending (no event loop here)
      }
      QTest::qWait(int(random.bounded(40)));
      process.kill();
      QVERIFY(process.waitForFinished(30000));

      QStringList hidden;
      int fromA = 0, fromB = 0;
      for (const auto& [name, bytes] : filesUnder(work, &hidden)) {
        QVERIFY2(filesA.count(name),
                 qPrintable("round " + QString::number(round) + ": unexpected file " + name));
        if (name == kManifest) {
          QJsonParseError error{};
          QJsonDocument::fromJson(bytes, &error);
          QVERIFY2(
              error.error == QJsonParseError::NoError && (bytes == filesA.at(name) || bytes.size() > 100),
              qPrintable("round " + QString::number(round) + ": a broken manifest"));
          continue;
        }
        if (bytes == filesA.at(name)) {
          ++fromA;
        } else {
          QVERIFY2(
              bytes == filesB.at(name),
              qPrintable(QString("round %1: %2 is neither the old nor the new version (%3 bytes; old %4, "
                                 "new %5)")
                             .arg(round)
                             .arg(name)
                             .arg(bytes.size())
                             .arg(filesA.at(name).size())
                             .arg(filesB.at(name).size())));
          ++fromB;
        }
      }
      for (const QString& name : hidden)
        QVERIFY2(name.contains(".tmp-"),
                 qPrintable("round " + QString::number(round) + ": hidden file " + name));
      qInfo("round %d: killed after %d new files: %d old, %d new, %d temporaries left", round, killAfter,
            fromA, fromB, int(hidden.size()));
      if (fromA > 0 && fromB > 0) ++mixedRounds;
    }
    // The kills landed inside the run, not before or after it (one may miss on a loaded machine).
    QVERIFY2(mixedRounds >= kRounds - 1, qPrintable(QString::number(mixedRounds)));
  }
};

QTEST_APPLESS_MAIN(CliKilledRunTest)
#include "test_cli_killed_run.moc"
