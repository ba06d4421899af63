// sapiens-cli finetune through the real binary: a bare official seg layout (images/ + masks/) made from
// the bundled sample, the seg fixture model, a small input size.

#include "sapiens/export/keypoints_json.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/finetune/finetuned_model_file.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
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

#include <algorithm>
#include <cmath>
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

// What a user labels in a few minutes: four 192 x 256 frames cut from the sample (the third mirrored),
// with two parts painted, the orange suit (Apparel) and the face (Face_Neck); the rest is left unlabelled.
struct SampleFrame {
  cv::Mat image;
  cv::Mat parts;  // CV_8UC1 seg classes, 255 unlabelled
  cv::Rect region;
  bool mirrored = false;
};

std::vector<SampleFrame> fewLabelledFrames() {
  const cv::Mat sample = readImageBgr(test::resource("samples/astronaut.png"));
  cv::Mat hsv;
  cv::cvtColor(sample, hsv, cv::COLOR_BGR2HSV);
  cv::Mat suit;
  cv::inRange(hsv, cv::Scalar(0, 130, 120), cv::Scalar(20, 255, 255), suit);
  suit(cv::Rect(0, 0, sample.cols, 150)).setTo(0);  // the hair and face are orange-ish too
  cv::morphologyEx(suit, suit, cv::MORPH_OPEN, cv::getStructuringElement(cv::MORPH_ELLIPSE, cv::Size(7, 7)));
  cv::Mat parts(sample.size(), CV_8UC1, cv::Scalar(255));
  parts.setTo(1, suit);
  cv::ellipse(parts, cv::Point(224, 122), cv::Size(46, 62), 0, 0, 360, cv::Scalar(3), cv::FILLED);

  const int w = sample.cols, h = sample.rows;
  std::vector<SampleFrame> frames;
  int index = 0;
  for (const cv::Rect& region :
       {cv::Rect(0, 0, w, h), cv::Rect(w / 8, 0, w * 3 / 4, h * 3 / 4),
        cv::Rect(w / 16, h / 8, w * 7 / 8, h * 7 / 8), cv::Rect(w / 4, 0, w * 3 / 4, h)}) {
    SampleFrame frame;
    frame.region = region;
    frame.mirrored = index++ == 2;
    cv::resize(sample(region), frame.image, cv::Size(192, 256), 0, 0, cv::INTER_AREA);
    cv::resize(parts(region), frame.parts, cv::Size(192, 256), 0, 0, cv::INTER_NEAREST);
    if (frame.mirrored) {
      cv::flip(frame.image, frame.image, 1);
      cv::flip(frame.parts, frame.parts, 1);
    }
    frames.push_back(frame);
  }
  return frames;
}

// "  training frames:   mIoU 0.0040 -> 0.6123 over the labelled classes (...), ..." -> 0.6123; NaN when
// the line is missing.
double metricAfter(const QString& out, const QString& metric) {
  const QString marker = "training frames:   " + metric + " ";
  const int at = out.indexOf(marker);
  if (at < 0) return std::nan("");
  return out.mid(at + marker.size()).section("-> ", 1).section(QRegularExpression("[ ,]"), 0, 0).toDouble();
}

// `sapiens-cli run` of one task with `model` on every picture of `frames`, as a user would after training;
// returns the output folder. Pose runs on one person box over the whole frame.
QString runTask(const QString& task, const QString& model, const QString& frames, const QString& inputSize,
                const QString& output) {
  QStringList arguments{"run", frames,         "--task",  task,           "--" + task + "-model",
                        model, "--input-size", inputSize, "--no-overlay", "--output",
                        output};
  if (task == "pose")
    arguments << "--bbox"
              << "0,0,191,255";
  const test::ProcessResult r = test::runCli(arguments);
  if (r.exitCode != 0 || r.crashed) qWarning("%s", qPrintable(describe(r)));
  return output;
}

double medianOf(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

}  // namespace

class TestCliFinetune : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // Run twice by the suite: in float32, and with SAPIENS_CPU_BF16=1, where auto trains in bf16 mixed
  // precision on a CPU with native bf16 (the same bounds hold).
  void initTestCase() {
    const QString unsupported = sapiens::test::forcedBf16Unsupported();
    if (!unsupported.isEmpty()) QSKIP(qPrintable(unsupported));
  }

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

  void defaultsLearnAFewPaintedFrames() {
    // The settings a user does not touch: no --lr, --batch or schedule flags. The input is the frames' own
    // size: at the default 1024 x 768 the same run takes 8 minutes on two cores (0.2 steps/s), too long
    // for the suite; the learning rate the range test picks is the same there (3e-2).
    QTemporaryDir dir;
    const std::string labels = dir.filePath("painted").toStdString();
    fs::create_directories(labels + "/images");
    fs::create_directories(labels + "/masks");
    int index = 0;
    for (const SampleFrame& frame : fewLabelledFrames()) {
      const std::string stem = "frame" + std::to_string(index++);
      cv::imwrite(labels + "/images/" + stem + ".png", frame.image);
      writeLabelPng(labels + "/masks/" + stem + ".png", frame.parts);
    }
    const QString tuned = dir.filePath("tuned.safetensors");
    const test::ProcessResult r =
        test::runCli({"finetune", "--labels", QString::fromStdString(labels), "--model", segModel(), "--task",
                      "seg", "--steps", "120", "--input-size", "256x192", "--output", tuned});
    QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(describe(r)));
    const double mIoU = metricAfter(r.out, "mIoU");
    QVERIFY2(r.err.contains("chosen by a range test"), qPrintable(describe(r)));

    // What nobody painted keeps the starting head's labels.
    const QString images = QString::fromStdString(labels + "/images");
    const QString before = runTask("seg", segModel(), images, "256x192", dir.filePath("before"));
    const QString after = runTask("seg", tuned, images, "256x192", dir.filePath("after"));
    double unpainted = 0, agreeing = 0;
    const int paintedParts[2] = {1, 3};  // Apparel, Face_Neck
    double paintedBoth[2] = {0, 0}, paintedEither[2] = {0, 0};
    index = 0;
    for (const SampleFrame& frame : fewLabelledFrames()) {
      const std::string name = "/frame" + std::to_string(index++) + ".seg.png";
      const cv::Mat start = cv::imread(before.toStdString() + name, cv::IMREAD_UNCHANGED);
      const cv::Mat trained = cv::imread(after.toStdString() + name, cv::IMREAD_UNCHANGED);
      QVERIFY2(!start.empty() && !trained.empty() && start.size() == frame.parts.size() &&
                   trained.size() == frame.parts.size(),
               name.c_str());
      const cv::Mat open = frame.parts == 255;
      unpainted += cv::countNonZero(open);
      agreeing += cv::countNonZero(open & (start == trained));
      const cv::Mat painted = frame.parts != 255;
      for (const int part : {0, 1}) {
        const int label = paintedParts[part];
        paintedBoth[part] += cv::countNonZero(painted & (frame.parts == label) & (trained == label));
        paintedEither[part] += cv::countNonZero(painted & ((frame.parts == label) | (trained == label)));
      }
    }
    const double agreement = agreeing / unpainted;
    // The painted parts' mIoU over the painted pixels of all four frames (the held-out one too), as the
    // user sees them in the trained head's output.
    const double paintedIoU = (paintedBoth[0] / paintedEither[0] + paintedBoth[1] / paintedEither[1]) / 2;
    const QString allClasses =
        r.out.section("training frames:   ", 1).section("(all classes ", 1).section(")", 0, 0);
    qInfo(
        "seg with the defaults, 120 steps: training mIoU over the painted classes %.3f (all classes %s), "
        "painted "
        "parts' mIoU %.3f; unpainted pixels keeping the starting head's label %.4f of %.0f",
        mIoU, qPrintable(allClasses), paintedIoU, agreement, unpainted);
    QVERIFY2(paintedIoU >= 0.6, qPrintable(describe(r)));
    // The figure reported is over what the labels teach, so it reads as the success it is; the mIoU over
    // every class, which the untaught classes' zeros pull down, is beside it.
    QVERIFY2(mIoU >= 0.6 && !allClasses.isEmpty(), qPrintable(describe(r)));
    QVERIFY2(
        agreement >= 0.9,
        qPrintable(
            QString("only %1 of the unpainted pixels kept their label\n%2").arg(agreement).arg(describe(r))));
  }

  void defaultsLearnAFewPlacedKeypoints() {
    // Nine keypoints placed on the same four frames where they are in the sample (nose, eyes, ears,
    // shoulders, elbows), one person box over the frame. At half the default input (512 x 384): PCK 1.0 in
    // 30 s; at the default 1024 x 768 the same run reaches 0.68 in 130 s on two cores.
    QTemporaryDir dir;
    LabelSet labels;
    labels.folder = dir.filePath("placed").toStdString();
    labels.task = Task::Pose;
    const cv::Point2f placed[9] = {{224, 136}, {246, 112}, {203, 112}, {272, 122}, {178, 122},
                                   {330, 290}, {100, 290}, {345, 440}, {60, 430}};
    for (const SampleFrame& frame : fewLabelledFrames()) {
      FrameLabels labelled;
      labelled.image = frame.image;
      PersonLabel person;
      person.keypoints.assign(308, KeypointLabel{});
      const double sx = 192.0 / frame.region.width, sy = 256.0 / frame.region.height;
      for (int k = 0; k < 9; ++k) {
        // In the mirrored frame the person's left eye is where the right one was drawn: left/right swap.
        const int source = frame.mirrored && k > 0 ? (k % 2 == 1 ? k + 1 : k - 1) : k;
        double x = (placed[source].x - frame.region.x) * sx;
        const double y = (placed[source].y - frame.region.y) * sy;
        if (frame.mirrored) x = 191 - x;
        if (x < 0 || y < 0 || x > 191 || y > 255) continue;
        person.keypoints[static_cast<std::size_t>(k)] = {x, y, 2};
      }
      person.bbox = BoundingBox{0, 0, 191, 255};
      labelled.people.push_back(person);
      addFrame(labels, "frame" + std::to_string(labels.frames.size()), labelled);
    }
    const QString model = QString::fromStdString(test::fixture("golden/pose/model.safetensors"));
    const QString tuned = dir.filePath("tuned.safetensors");
    const test::ProcessResult r =
        test::runCli({"finetune", "--labels", QString::fromStdString(labels.folder), "--model", model,
                      "--task", "pose", "--steps", "120", "--input-size", "512x384", "--output", tuned});
    QVERIFY2(r.exitCode == 0 && !r.crashed, qPrintable(describe(r)));
    const double pck = metricAfter(r.out, "PCK@0.05");

    // The 299 keypoints nobody placed stay where the starting head put them, with the same scores.
    const QString frames = dir.filePath("frames");
    fs::create_directories(frames.toStdString());
    int index = 0;
    for (const SampleFrame& frame : fewLabelledFrames())
      cv::imwrite(frames.toStdString() + "/frame" + std::to_string(index++) + ".png", frame.image);
    const QString before = runTask("pose", model, frames, "512x384", dir.filePath("before"));
    const QString after = runTask("pose", tuned, frames, "512x384", dir.filePath("after"));
    std::vector<double> displacements, scoreChanges;
    for (int f = 0; f < index; ++f) {
      const std::string name = "/frame" + std::to_string(f) + ".pose.json";
      const KeypointPredictions start = readKeypointsJson(before.toStdString() + name);
      const KeypointPredictions trained = readKeypointsJson(after.toStdString() + name);
      QCOMPARE(start.frames.at(0).instances.size(), std::size_t(1));
      QCOMPARE(trained.frames.at(0).instances.size(), std::size_t(1));
      const PoseInstance& a = start.frames[0].instances[0];
      const PoseInstance& b = trained.frames[0].instances[0];
      for (std::size_t k = 9; k < 308; ++k) {
        displacements.push_back(
            std::hypot(a.keypoints[k][0] - b.keypoints[k][0], a.keypoints[k][1] - b.keypoints[k][1]));
        scoreChanges.push_back(std::abs(double(a.scores[k]) - double(b.scores[k])));
      }
    }
    const double displacement = medianOf(displacements), scoreChange = medianOf(scoreChanges);
    qInfo(
        "pose with the defaults, 120 steps: training PCK@0.05 %.3f; over the unplaced keypoints median "
        "displacement %.2f px, median score change %.4f",
        pck, displacement, scoreChange);
    QVERIFY2(pck >= 0.6, qPrintable(describe(r)));
    QVERIFY2(displacement <= 2.0 && scoreChange <= 0.05, qPrintable(describe(r)));
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
