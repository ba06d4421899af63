// sapiens-cli finetune through the real binary: a bare official seg layout (images/ + masks/) made from
// the bundled sample, the seg fixture model, a small input size.

#include "sapiens/export/mask_png.h"
#include "sapiens/finetune/finetuned_model_file.h"
#include "sapiens/media/image_io.h"
#include "sapiens/model/model.h"
#include "test_support.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <filesystem>

using namespace sapiens;
namespace fs = std::filesystem;

using sapiens::test::describe;

namespace {

// images/ + masks/ of three crops of the sample; a mask class per 16 x 16 block from its brightness.
void writeBareLayout(const std::string& folder) {
  fs::create_directories(folder + "/images");
  fs::create_directories(folder + "/masks");
  const cv::Mat sample = readImageBgr(test::resource("samples/astronaut.png"));
  const int w = sample.cols, h = sample.rows;
  int index = 0;
  for (const cv::Rect& region : {cv::Rect(0, 0, w, h), cv::Rect(w / 8, 0, w * 3 / 4, h * 3 / 4),
                                 cv::Rect(w / 4, h / 4, w * 3 / 4, h * 3 / 4)}) {
    cv::Mat frame, gray;
    cv::resize(sample(region), frame, cv::Size(96, 128), 0, 0, cv::INTER_AREA);
    cv::cvtColor(frame, gray, cv::COLOR_BGR2GRAY);
    cv::Mat mask(frame.size(), CV_8UC1);
    for (int y = 0; y < frame.rows; y += 16) {
      for (int x = 0; x < frame.cols; x += 16) {
        const double mean = cv::mean(gray(cv::Rect(x, y, 16, 16)))[0];
        mask(cv::Rect(x, y, 16, 16)).setTo(mean < 70 ? 0 : mean < 120 ? 1 : mean < 170 ? 3 : 4);
      }
    }
    const std::string stem = "frame" + std::to_string(index++);
    cv::imwrite(folder + "/images/" + stem + ".jpg", frame);
    writeLabelPng(folder + "/masks/" + stem + ".png", mask);
  }
}

QString segModel() {
  return QString::fromStdString(test::fixture("golden/seg/model.safetensors"));
}

}  // namespace

class TestCliFinetune : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void trainsOnTheOfficialLayoutAndWritesALoadableModel() {
    QTemporaryDir dir;
    const std::string labels = dir.filePath("bare").toStdString();
    writeBareLayout(labels);
    const QString output = dir.filePath("tuned.safetensors");
    const test::ProcessResult r =
        test::runCli({"finetune", "--labels", QString::fromStdString(labels), "--model", segModel(), "--task",
                      "seg", "--steps", "80", "--input-size", "128x96", "--val-split", "0.34", "--lr", "3e-3",
                      "--output", output});
    QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(describe(r)));
    QVERIFY2(r.out.contains("training frames:   mIoU") && r.out.contains("validation frames: mIoU"),
             qPrintable(describe(r)));
    QVERIFY2(r.err.contains("step 80/80"), qPrintable(describe(r)));
    const Model model = Model::load(output.toStdString());
    QCOMPARE(model.task(), Task::Seg);
    QCOMPARE(model.architecture().head.outChannels, 29);
    QVERIFY(!fs::exists(labels + "/labelset.json"));  // the bare layout was read in place
  }

  void killedWhileTrainingLeavesLoadableSnapshots() {
    // A snapshot every step; the process is killed (SIGKILL) at three moments of its run. Every snapshot
    // on disk then loads as a model: an older one or a newer one, never a torn file.
    QTemporaryDir dir;
    const std::string labels = dir.filePath("bare").toStdString();
    writeBareLayout(labels);
    const QString snapshots = dir.filePath("snapshots");
    const QStringList arguments{"finetune",
                                "--labels",
                                QString::fromStdString(labels),
                                "--model",
                                segModel(),
                                "--task",
                                "seg",
                                "--steps",
                                "100000",
                                "--input-size",
                                "64x48",
                                "--snapshot-every",
                                "1",
                                "--snapshot-dir",
                                snapshots,
                                "--output",
                                dir.filePath("never.safetensors")};
    const auto snapshotFiles = [&snapshots] {
      return QDir(snapshots).entryList({QStringLiteral("snapshot-step-*.safetensors")}, QDir::Files,
                                       QDir::Name);
    };
    for (const int delayMs : {0, 37, 111}) {
      QProcess process;
      process.start(QString::fromUtf8(SAPIENS_CLI_PATH), arguments);
      QVERIFY(process.waitForStarted());
      const int before = int(snapshotFiles().size());
      QTRY_VERIFY_WITH_TIMEOUT(snapshotFiles().size() > before + 1 || process.state() == QProcess::NotRunning,
                               120000);
      QVERIFY2(process.state() == QProcess::Running, process.readAllStandardError().constData());
      QTest::qWait(delayMs);
      process.kill();  // SIGKILL
      QVERIFY(process.waitForFinished(10000));
      const QStringList files = snapshotFiles();
      QVERIFY(files.size() >= 2);
      for (const QString& file : files) {
        const std::string path = QDir(snapshots).filePath(file).toStdString();
        try {
          const Model model = loadFinetunedModel(path, {}, segModel().toStdString());
          QCOMPARE(model.task(), Task::Seg);
        } catch (const std::exception& e) {
          QFAIL(qPrintable(QString("%1 does not load after a kill: %2").arg(file, e.what())));
        }
      }
    }
    QVERIFY(!QFile::exists(dir.filePath("never.safetensors")));
  }

  void malformedLabelsAndBadArgumentsFail() {
    QTemporaryDir dir;
    const std::string labels = dir.filePath("bare").toStdString();
    writeBareLayout(labels);
    writeLabelPng(labels + "/masks/frame1.png", cv::Mat(100, 96, CV_8UC1, cv::Scalar(0)));
    const QString output = dir.filePath("tuned.safetensors");
    test::ProcessResult r =
        test::runCli({"finetune", "--labels", QString::fromStdString(labels), "--model", segModel(), "--task",
                      "seg", "--steps", "5", "--input-size", "128x96", "--output", output});
    QVERIFY2(r.exitCode == 1 && r.err.contains("masks/frame1.png") && r.err.contains("96x100"),
             qPrintable(describe(r)));
    QVERIFY(!fs::exists(output.toStdString()));

    r = test::runCli({"finetune", "--labels", QString::fromStdString(labels), "--model", segModel(), "--task",
                      "dance", "--steps", "5", "--output", output});
    QVERIFY2(r.exitCode == 2, qPrintable(describe(r)));
    r = test::runCli({"finetune", "--labels", QString::fromStdString(labels), "--model", segModel(), "--task",
                      "pose", "--steps", "5", "--output", output});
    QVERIFY2(r.exitCode == 1 && r.err.contains("not pose"), qPrintable(describe(r)));
  }
};

QTEST_APPLESS_MAIN(TestCliFinetune)
#include "test_cli_finetune.moc"
