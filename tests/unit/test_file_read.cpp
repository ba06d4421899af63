// Files are read one way (io/file_read.h): every reader of core refuses a folder, a FIFO, a file larger
// than its kind ever is and a file whose read fails with an error naming the path, promptly (a FIFO is
// never waited on), and never lets a stream, filesystem or JSON exception out untranslated. Also the
// fuzzer's label-set crash (a dense target naming a folder) as a plain regression.

#include "sapiens/export/coco_keypoints.h"
#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/npy.h"
#include "sapiens/finetune/finetuned_model_file.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/io/file_read.h"
#include "sapiens/media/image_io.h"
#include "sapiens/pipeline/person_box_file.h"
#include "sapiens/result/keypoint_metadata.h"
#include "sapiens/result/seg_classes.h"
#include "sapiens/run/shard_merge.h"
#include "test_support.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ios>
#include <thread>

using namespace sapiens;
namespace fs = std::filesystem;

namespace {

enum class Hostile { Folder, Fifo, Oversize, Unreadable };

// A file the size of `bytes` that takes no disk: its size is what the readers check first.
void makeSparseFile(const std::string& path, std::uintmax_t bytes) {
  std::ofstream(path).close();
  fs::resize_file(path, bytes);
}

// Puts the hostile thing at `path`. Unreadable: a link to /proc/self/mem, a regular file (to stat) whose
// read fails with EIO, for root too (root reads a file of mode 000).
void makeHostile(Hostile kind, const std::string& path, std::uintmax_t bound) {
  fs::create_directories(fs::path(path).parent_path());
  switch (kind) {
    case Hostile::Folder:
      fs::create_directories(path);
      break;
    case Hostile::Fifo:
      QVERIFY(::mkfifo(path.c_str(), 0644) == 0);
      break;
    case Hostile::Oversize:
      makeSparseFile(path, bound + 1);
      break;
    case Hostile::Unreadable:
      fs::create_symlink("/proc/self/mem", path);
      break;
  }
}

// Opens the FIFO for writing after a while, so that a reader wrongly waiting on it is released instead of
// hanging the test; the reader must have finished long before.
class FifoRelease {
 public:
  explicit FifoRelease(std::string path)
      : thread_([this, path = std::move(path)] {
          for (int i = 0; i < 100 && !done_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
          if (done_) return;
          const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
          if (fd >= 0) ::close(fd);
        }) {}
  ~FifoRelease() {
    done_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

bool isUntranslated(const std::exception& error) {
  return dynamic_cast<const std::ios_base::failure*>(&error) != nullptr ||
         dynamic_cast<const fs::filesystem_error*>(&error) != nullptr ||
         dynamic_cast<const nlohmann::json::exception*>(&error) != nullptr;
}

struct Reader {
  const char* name;
  std::uintmax_t bound;     ///< the reader's size bound (an oversize file is one byte more)
  const char* hostileName;  ///< where the hostile thing goes, relative to the scratch folder
  std::function<void(const std::string& scratch)> read;
};

std::string in(const std::string& scratch, const char* name) {
  return scratch + "/" + name;
}

// A seg label set whose one frame is complete, in `folder`, for the label readers.
void writeSegSet(const std::string& folder) {
  fs::create_directories(folder + "/images");
  fs::create_directories(folder + "/masks");
  cv::imwrite(folder + "/images/a.png", cv::Mat(4, 6, CV_8UC3, cv::Scalar(1, 2, 3)));
  cv::imwrite(folder + "/masks/a.png", cv::Mat(4, 6, CV_8UC1, cv::Scalar(1)));
}

std::vector<Reader> readers() {
  const std::uintmax_t json = kMaxJsonFileBytes;
  return {
      {"npy array", kMaxNpyFileBytes, "a.npy", [](const std::string& s) { readNpy(in(s, "a.npy")); }},
      {"keypoints json", json, "k.json", [](const std::string& s) { readKeypointsJson(in(s, "k.json")); }},
      {"coco keypoints", json, "c.json", [](const std::string& s) { readCocoKeypoints(in(s, "c.json")); }},
      {"box file", json, "boxes.json", [](const std::string& s) { readPersonBoxFile(in(s, "boxes.json")); }},
      {"seg classes", json, "seg.json", [](const std::string& s) { loadSegClasses(in(s, "seg.json")); }},
      {"keypoint table", json, "kp.json",
       [](const std::string& s) { loadKeypointMetadata(in(s, "kp.json")); }},
      {"picture", kMaxPictureFileBytes, "p.png", [](const std::string& s) { readImageBgr(in(s, "p.png")); }},
      {"label set manifest", json, "set/labelset.json",
       [](const std::string& s) { openLabelSet(in(s, "set")); }},
      {"label mask", kMaxPictureFileBytes, "set/masks/b.png",
       [](const std::string& s) {
         writeSegSet(in(s, "set"));
         LabelSet labels = openLabelSet(in(s, "set"));
         labels.frames.at(0).mask = "masks/b.png";
         readFrameLabels(labels, 0);
       }},
      {"shard manifest", json, "run/results.shard-1-of-2.json",
       [](const std::string& s) { mergeShardManifests(in(s, "run")); }},
      {"checkpoint", ~std::uintmax_t{0} - 1, "m.safetensors",
       [](const std::string& s) { readModelMetadata(in(s, "m.safetensors")); }},
  };
}

}  // namespace

class TestFileRead : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void readsARegularFileWhole() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("a.txt").toStdString();
    const std::string bytes(200000, 'x');
    std::ofstream(path, std::ios::binary) << bytes;
    QCOMPARE(readWholeFile(path, bytes.size(), "a text file").size(), bytes.size());
    // Files that announce no size (under /proc) are read to their end, within the bound.
    QVERIFY(!readWholeFile("/proc/self/status", 1 << 20, "a status file").empty());
  }

  void refusesWhatIsNotARegularFile_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("words");
    QTest::newRow("missing") << "/nonexistent/a.json"
                             << "no such file (expected a JSON file)";
    QTest::newRow("device") << "/dev/null"
                            << "is a character device, not a JSON file";
    QTest::newRow("folder") << "/tmp"
                            << "is a folder, not a JSON file";
    QTest::newRow("unreadable") << "/proc/self/mem"
                                << "cannot be read: Input/output error";
  }
  void refusesWhatIsNotARegularFile() {
    QFETCH(QString, path);
    QFETCH(QString, words);
    try {
      readWholeFile(path.toStdString(), kMaxJsonFileBytes, "a JSON file");
      QFAIL("read");
    } catch (const FileReadError& error) {
      QCOMPARE(QString::fromStdString(error.path()), path);
      QVERIFY2(QString(error.what()).startsWith(path + ": ") && QString(error.what()).contains(words),
               error.what());
    }
  }

  void boundsTheSizeBeforeReading() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("big.json").toStdString();
    makeSparseFile(path, 5000);
    try {
      readWholeFile(path, 4999, "a JSON file");
      QFAIL("read");
    } catch (const FileReadError& error) {
      QVERIFY2(QString(error.what()).contains("is 5000 bytes, more than the 4999 bytes a JSON file may have"),
               error.what());
    }
  }

  void everyReaderRefusesHostileFilesNamingThem_data() {
    QTest::addColumn<int>("reader");
    QTest::addColumn<int>("kind");
    const char* kinds[] = {"folder", "fifo", "oversize", "unreadable"};
    const std::vector<Reader> all = readers();
    for (std::size_t r = 0; r < all.size(); ++r)
      for (int k = 0; k < 4; ++k) {
        if (k == int(Hostile::Oversize) && all[r].bound > (std::uintmax_t{64} << 30)) continue;
        QTest::addRow("%s, %s", all[r].name, kinds[k]) << int(r) << k;
      }
  }
  void everyReaderRefusesHostileFilesNamingThem() {
    QFETCH(int, reader);
    QFETCH(int, kind);
    const Reader subject = readers()[std::size_t(reader)];
    QTemporaryDir dir;
    const std::string scratch = dir.path().toStdString();
    const std::string hostile = in(scratch, subject.hostileName);
    makeHostile(Hostile(kind), hostile, subject.bound);
    const auto start = std::chrono::steady_clock::now();
    std::string message;
    {
      const FifoRelease release(hostile);
      try {
        subject.read(scratch);
      } catch (const std::exception& error) {
        message = error.what();
        QVERIFY2(!isUntranslated(error), error.what());
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    QVERIFY2(!message.empty(), "the reader took it without an error");
    QVERIFY2(seconds < 5, qPrintable(QString("took %1 s: waited on the FIFO").arg(seconds)));
    QVERIFY2(message.find(hostile) != std::string::npos, message.c_str());
  }

  // The fuzzer's finding on an AMD machine (tests/fuzz/corpus/label_set/crash-81c1f2f8...): a dense
  // target naming a folder let std::ios_base::failure out of readNpy and aborted `finetune --labels`.
  void aTargetNamingAFolderIsALabelSetError() {
    QTemporaryDir dir;
    const std::string folder = dir.path().toStdString();
    fs::create_directories(folder + "/images");
    fs::create_directories(folder + "/targets");
    cv::imwrite(folder + "/images/a.png", cv::Mat(4, 6, CV_8UC3, cv::Scalar(1, 2, 3)));
    std::ofstream(folder + "/labelset.json")
        << R"({"forn": 0, "task": "normal", "frames": [{"image": "images/a.png", "target": "targets/"}]})";
    try {
      const LabelSet labels = openLabelSet(folder);
      readFrameLabels(labels, 0);
      QFAIL("read");
    } catch (const LabelSetError& error) {
      QVERIFY2(QString(error.what()).contains(QString::fromStdString(folder + "/targets/")) &&
                   QString(error.what()).contains("is a folder"),
               error.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestFileRead)
#include "test_file_read.moc"
