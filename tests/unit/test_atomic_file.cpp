// AtomicFile: the target holds either its old contents or the complete new ones, never a mixture, and
// no temporary file is left behind.

#include "file_size_limit.h"
#include "sapiens/io/atomic_file.h"
#include "test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace {

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

QStringList filesIn(const QTemporaryDir& dir) {
  return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden | QDir::System, QDir::Name);
}

mode_t permissionsOf(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return 0;
  return info.st_mode & 07777;
}

using sapiens::test::FileSizeLimit;

/// Sets the process umask for the lifetime of the object.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : previous_(umask(mask)) {}
  ~ScopedUmask() { umask(previous_); }

 private:
  mode_t previous_;
};

}  // namespace

class TestAtomicFile : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void commitReplacesContents();
  void uncommittedFileLeavesOldContents();
  void temporaryFileIsHiddenBesideTarget();
  void newFileFollowsUmask();
  void replacementKeepsPermissionBits();
  void missingFolderNamesThePath();
  void directoryTargetIsRefused();
  void writeFailureKeepsOldContents();
  void useAfterCommitIsRefused();
  void writeFileAtomicallyWritesLargeContents();
};

void TestAtomicFile::commitReplacesContents() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("settings.json").toStdString();
  writeBytes(path, "old contents");
  {
    sapiens::AtomicFile file(path);
    file.write("new ");
    file.write("contents");
    QCOMPARE(readBytes(path), std::string("old contents"));  // untouched until commit
    file.commit();
  }
  QCOMPARE(readBytes(path), std::string("new contents"));
  QCOMPARE(filesIn(dir), QStringList{"settings.json"});
}

void TestAtomicFile::uncommittedFileLeavesOldContents() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("settings.json").toStdString();
  writeBytes(path, "old contents");
  {
    sapiens::AtomicFile file(path);
    file.write("half-written replacement");
  }
  QCOMPARE(readBytes(path), std::string("old contents"));
  QCOMPARE(filesIn(dir), QStringList{"settings.json"});
}

void TestAtomicFile::temporaryFileIsHiddenBesideTarget() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("out.bin").toStdString();
  sapiens::AtomicFile file(path);
  const QStringList during = filesIn(dir);
  QCOMPARE(during.size(), 1);
  const QString prefix = QString(".out.bin.tmp-%1-").arg(getpid());
  QVERIFY2(during.front().startsWith(prefix), qPrintable(during.front()));
  QVERIFY(!QFile::exists(QString::fromStdString(path)));
  file.write("x");
  file.commit();
  QCOMPARE(filesIn(dir), QStringList{"out.bin"});
}

void TestAtomicFile::newFileFollowsUmask() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("new.txt").toStdString();
  {
    ScopedUmask mask(027);
    sapiens::writeFileAtomically(path, "hello");
  }
  QCOMPARE(readBytes(path), std::string("hello"));
  QCOMPARE(permissionsOf(path), mode_t(0640));  // 0644 & ~027
}

void TestAtomicFile::replacementKeepsPermissionBits() {
  QTemporaryDir dir;
  const std::string secret = dir.filePath("secret.key").toStdString();
  const std::string script = dir.filePath("run.sh").toStdString();
  writeBytes(secret, "old");
  writeBytes(script, "old");
  QVERIFY(chmod(secret.c_str(), 0600) == 0);
  QVERIFY(chmod(script.c_str(), 0755) == 0);
  sapiens::writeFileAtomically(secret, "new secret");
  sapiens::writeFileAtomically(script, "#!/bin/sh\n");
  QCOMPARE(permissionsOf(secret), mode_t(0600));
  QCOMPARE(permissionsOf(script), mode_t(0755));
  QCOMPARE(readBytes(secret), std::string("new secret"));
}

void TestAtomicFile::missingFolderNamesThePath() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("no/such/folder/file.txt").toStdString();
  try {
    sapiens::AtomicFile file(path);
    QFAIL("opened a file in a missing folder");
  } catch (const sapiens::IoError& e) {
    const std::string message = e.what();
    QVERIFY2(message.find(path) != std::string::npos, e.what());
    QVERIFY2(message.find("No such file or directory") != std::string::npos, e.what());
  }
}

void TestAtomicFile::directoryTargetIsRefused() {
  QTemporaryDir dir;
  QVERIFY(QDir(dir.path()).mkdir("target"));
  const std::string path = dir.filePath("target").toStdString();
  QVERIFY_THROWS_EXCEPTION(sapiens::IoError, sapiens::writeFileAtomically(path, "x"));
  try {
    sapiens::writeFileAtomically(path, "x");
  } catch (const sapiens::IoError& e) {
    QVERIFY2(std::string(e.what()).find(path + "': it is a directory") != std::string::npos, e.what());
  }
  QCOMPARE(filesIn(dir), QStringList{});
}

// A full disk cannot be produced without privileges; a file-size limit makes write() fail the same way
// (with EFBIG instead of ENOSPC) part-way through the new contents.
void TestAtomicFile::writeFailureKeepsOldContents() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("model.bin").toStdString();
  writeBytes(path, "old contents");
  const std::string large(1 << 20, 'x');
  std::string message;
  {
    FileSizeLimit limit(64 * 1024);
    try {
      sapiens::AtomicFile file(path);
      file.write(large);
      file.commit();
    } catch (const sapiens::IoError& e) {
      message = e.what();
    }
  }
  QVERIFY2(message.find(path) != std::string::npos, message.c_str());
  QVERIFY2(message.find("File too large") != std::string::npos, message.c_str());
  QCOMPARE(readBytes(path), std::string("old contents"));
  QCOMPARE(filesIn(dir), QStringList{"model.bin"});
}

void TestAtomicFile::useAfterCommitIsRefused() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("once.txt").toStdString();
  sapiens::AtomicFile file(path);
  file.write("once");
  file.commit();
  QVERIFY_THROWS_EXCEPTION(sapiens::IoError, file.write("twice"));
  QVERIFY_THROWS_EXCEPTION(sapiens::IoError, file.commit());
  QCOMPARE(readBytes(path), std::string("once"));
}

void TestAtomicFile::writeFileAtomicallyWritesLargeContents() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("large.bin").toStdString();
  std::string contents(8 << 20, '\0');
  for (std::size_t i = 0; i < contents.size(); ++i) contents[i] = static_cast<char>(i * 131 % 251);
  sapiens::writeFileAtomically(path, contents);
  QCOMPARE(readBytes(path) == contents, true);
}

QTEST_APPLESS_MAIN(TestAtomicFile)
#include "test_atomic_file.moc"
