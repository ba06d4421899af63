// `sapiens-cli run` end to end on the bundled sample with the golden fixture models, every output read
// back with a reader that is not ours (VTK's PLY reader, OpenCV, Qt's JSON, a hand-parsed .npy).

#include "sapiens/common/cpu_features.h"
#include "test_support.h"

#include <vtkDataArray.h>
#include <vtkPLYReader.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <cstring>

using sapiens::test::describe;
using sapiens::test::fixture;
using sapiens::test::resource;
using sapiens::test::runCli;

using sapiens::test::readJson;

namespace {

QStringList allFixtureModels() {
  QStringList args;
  for (const char* task : {"pose", "seg", "normal", "albedo", "pointmap"})
    args << QString("--%1-model").arg(task)
         << QString::fromStdString(fixture(std::string("golden/") + task + "/model.safetensors"));
  return args;
}

// A float32 little-endian C-order .npy, parsed here independently of core/export.
cv::Mat readNpyFloat(const QString& path) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) return {};
  const QByteArray bytes = file.readAll();
  if (!bytes.startsWith("\x93NUMPY")) return {};
  const int headerLength = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  const QString header = QString::fromLatin1(bytes.mid(10, headerLength));
  if (!header.contains("'descr': '<f4'") || !header.contains("'fortran_order': False")) return {};
  const QString shapeText = header.section("'shape': (", 1).section(")", 0, 0);
  QList<int> shape;
  for (const QString& part : shapeText.split(",", Qt::SkipEmptyParts)) shape << part.trimmed().toInt();
  if (shape.size() == 2) shape << 1;  // a single-channel map (alpha) is (H, W)
  if (shape.size() != 3) return {};
  cv::Mat m(shape[0], shape[1], CV_32FC(shape[2]));
  const qsizetype need = qsizetype(m.total() * m.elemSize());
  if (bytes.size() - 10 - headerLength != need) return {};
  std::memcpy(m.data, bytes.constData() + 10 + headerLength, need);
  return m;
}

// Pose JSON in the official layout.
void checkPoseJson(const QString& stem) {
  const QJsonObject pose = readJson(stem + ".pose.json");
  QCOMPARE(pose["num_keypoints"].toInt(), 308);
  QCOMPARE(pose["image_size"].toArray()[0].toInt(), 512);
  const QJsonArray frames = pose["frames"].toArray();
  QCOMPARE(frames.size(), 1);
  QCOMPARE(frames[0].toObject()["image_name"].toString(), QString("astronaut.png"));
  const QJsonArray instances = frames[0].toObject()["instances"].toArray();
  QVERIFY(!instances.isEmpty());
  for (const auto& value : instances) {
    const QJsonObject instance = value.toObject();
    QCOMPARE(instance["bbox"].toArray().size(), 4);
    QCOMPARE(instance["keypoints"].toArray().size(), 308);
    QCOMPARE(instance["keypoint_scores"].toArray().size(), 308);
    QCOMPARE(instance["keypoints"].toArray()[0].toArray().size(), 2);
  }
}

// Each written 3-D keypoint lies within the range, per coordinate, of the valid person samples of the
// pointmap within 16 pixels of its keypoint (the largest window), and only keypoints that count have one.
void checkKeypoints3d(const QString& stem, const cv::Mat& labels) {
  const cv::Mat pointmap = readNpyFloat(stem + ".pointmap.npy");
  const QJsonObject pose = readJson(stem + ".pose.json");
  const double threshold = pose["kpt_thr_used"].toDouble();
  int written = 0;
  for (const auto& value : pose["frames"].toArray()[0].toObject()["instances"].toArray()) {
    const QJsonObject instance = value.toObject();
    const QJsonArray points = instance["keypoints_3d"].toArray();
    QCOMPARE(points.size(), 308);
    for (int k = 0; k < 308; ++k) {
      if (points[k].isNull()) continue;
      ++written;
      QVERIFY(instance["keypoint_scores"].toArray()[k].toDouble() >= threshold);
      const QJsonArray keypoint = instance["keypoints"].toArray()[k].toArray();
      const int u = int(keypoint[0].toDouble()), v = int(keypoint[1].toDouble());
      cv::Vec3f lo(1e30f, 1e30f, 1e30f), hi(-1e30f, -1e30f, -1e30f);
      for (int y = std::max(0, v - 16); y <= std::min(511, v + 16); ++y)
        for (int x = std::max(0, u - 16); x <= std::min(511, u + 16); ++x) {
          const cv::Vec3f p = pointmap.at<cv::Vec3f>(y, x);
          if (labels.at<uchar>(y, x) == 0 || !(std::isfinite(p[2]) && p[2] > 0)) continue;
          for (int c = 0; c < 3; ++c) lo[c] = std::min(lo[c], p[c]), hi[c] = std::max(hi[c], p[c]);
        }
      for (int c = 0; c < 3; ++c) {
        const float got = float(points[k].toArray()[c].toDouble());
        QVERIFY2(got >= lo[c] && got <= hi[c],
                 qPrintable(QString("keypoint %1 coordinate %2: %3 outside [%4, %5]")
                                .arg(k)
                                .arg(c)
                                .arg(got)
                                .arg(lo[c])
                                .arg(hi[c])));
      }
    }
  }
  QVERIFY2(written > 50, qPrintable(QString("only %1 3-D keypoints written").arg(written)));
}

// OpenPose's 3-D lists: (x, y, z, score) per keypoint of each part, as long as the 2-D lists' keypoints.
void checkOpenPose3d(const QString& stem) {
  const QJsonObject person = readJson(stem + ".pose.openpose.json")["people"].toArray()[0].toObject();
  int present = 0;
  for (const char* part : {"pose", "face", "hand_left", "hand_right"}) {
    const QJsonArray flat = person[QString("%1_keypoints_3d").arg(part)].toArray();
    QCOMPARE(flat.size() / 4, person[QString("%1_keypoints_2d").arg(part)].toArray().size() / 3);
    for (int i = 3; i < flat.size(); i += 4) present += flat[i].toDouble() > 0;
  }
  QVERIFY(present > 0);
}

void checkNormals(const QString& stem, const cv::Mat& labels) {
  // Normals: unit vectors at every foreground pixel, after the resize to the picture (zero, "no
  // direction", is the only other value), and the PNG encodes them.
  const cv::Mat normal = readNpyFloat(stem + ".normal.npy");
  QCOMPARE(normal.type(), CV_32FC3);
  QCOMPARE(normal.size(), labels.size());
  const cv::Mat normalPng = cv::imread((stem + ".normal.png").toStdString(), cv::IMREAD_COLOR);
  int foreground = 0;
  for (int y = 0; y < 512; ++y)
    for (int x = 0; x < 512; ++x) {
      const cv::Vec3f n = normal.at<cv::Vec3f>(y, x);
      const double length = cv::norm(n);
      if (labels.at<uchar>(y, x) == 0) {
        QVERIFY(std::abs(length - 1.0) <= 1e-4 || length == 0.0);
        continue;
      }
      ++foreground;
      QVERIFY2(std::abs(length - 1.0) <= 1e-4,
               qPrintable(QString("normal at (%1, %2) has length %3").arg(x).arg(y).arg(length)));
      if ((x * 7 + y) % 97 != 0) continue;
      const cv::Vec3b bgr = normalPng.at<cv::Vec3b>(y, x);
      QCOMPARE(int(bgr[2]), int((n[0] + 1) / 2 * 255));  // R = x
      QCOMPARE(int(bgr[0]), int((n[2] + 1) / 2 * 255));  // B = z
    }
  QVERIFY(foreground > 1000);
}

void checkPly(const QString& stem, const cv::Mat& labels) {
  // PLY through VTK: one vertex per foreground pixel with a valid depth, positions = the pointmap.
  const cv::Mat pointmap = readNpyFloat(stem + ".pointmap.npy");
  QCOMPARE(pointmap.type(), CV_32FC3);
  std::vector<cv::Vec3f> expected;
  for (int y = 0; y < 512; ++y)
    for (int x = 0; x < 512; ++x) {
      const cv::Vec3f p = pointmap.at<cv::Vec3f>(y, x);
      if (labels.at<uchar>(y, x) > 0 && std::isfinite(p[2]) && p[2] > 0) expected.push_back(p);
    }
  auto reader = vtkSmartPointer<vtkPLYReader>::New();
  reader->SetFileName((stem + ".ply").toUtf8().constData());
  reader->Update();
  vtkPolyData* cloud = reader->GetOutput();
  QCOMPARE(static_cast<size_t>(cloud->GetNumberOfPoints()), expected.size());
  if (!expected.empty()) {
    for (size_t i = 0; i < expected.size(); i += std::max<size_t>(1, expected.size() / 50)) {
      double p[3];
      cloud->GetPoint(static_cast<vtkIdType>(i), p);
      for (int c = 0; c < 3; ++c) QCOMPARE(float(p[c]), expected[i][c]);
    }
    vtkDataArray* normals = cloud->GetPointData()->GetNormals();
    QVERIFY(normals != nullptr);
    for (vtkIdType i = 0; i < normals->GetNumberOfTuples(); ++i) {
      const double* n = normals->GetTuple3(i);
      QVERIFY(std::abs(std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) - 1.0) <= 1e-4);
    }
    QVERIFY(cloud->GetPointData()->GetScalars() != nullptr);  // red green blue
    QCOMPARE(cloud->GetPointData()->GetScalars()->GetNumberOfComponents(), 3);
  }
}

}  // namespace

class CliRunTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void everyTaskOnTheSampleProducesReadableOutputs() {
    QTemporaryDir out;
    QStringList args{"run",
                     QString::fromStdString(resource("samples/astronaut.png")),
                     "--output",
                     out.path(),
                     "--task",
                     "pose,seg,normal,albedo,pointmap",
                     "--device",
                     "cpu",
                     "--glb",
                     "--keypoint-format",
                     "coco17,wholebody,openpose"};
    auto r = runCli(args + allFixtureModels());
    QVERIFY2(!r.crashed, qPrintable(r.err));
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    const QString stem = out.path() + "/astronaut";

    // Manifest: every output listed, the models described.
    const QJsonObject manifest = readJson(out.path() + "/results.json");
    QCOMPARE(manifest["succeeded"].toInt(), 1);
    QCOMPARE(manifest["models"].toArray().size(), 5);
    const QJsonObject outputs = manifest["inputs"].toArray()[0].toObject()["outputs"].toObject();
    for (const char* kind :
         {"seg", "seg_overlay", "pose", "pose_overlay", "normal", "normal_npy", "albedo", "albedo_npy",
          "pointmap_npy", "depth", "ply", "glb", "pose_coco17", "pose_wholebody", "pose_openpose"}) {
      QVERIFY2(outputs.contains(kind), kind);
      QVERIFY2(QFile::exists(outputs[kind].toString()), kind);
    }

    // Segmentation: a class-index PNG of the picture's size.
    const cv::Mat labels = cv::imread((stem + ".seg.png").toStdString(), cv::IMREAD_UNCHANGED);
    QCOMPARE(labels.type(), CV_8UC1);
    QCOMPARE(labels.cols, 512);
    QCOMPARE(labels.rows, 512);
    double maxLabel = 0;
    cv::minMaxLoc(labels, nullptr, &maxLabel);
    QVERIFY(maxLabel <= 28);

    checkPoseJson(stem);

    checkNormals(stem, labels);

    const cv::Mat albedo = readNpyFloat(stem + ".albedo.npy");
    QCOMPARE(albedo.type(), CV_32FC3);
    double lo = 0, hi = 0;
    cv::minMaxLoc(albedo.reshape(1), &lo, &hi);
    QVERIFY(lo >= 0.0 && hi <= 1.0);

    checkPly(stem, labels);
    checkKeypoints3d(stem, labels);
    checkOpenPose3d(stem);
  }

  // `run --task matting` on the sample: the alpha matte as the official demo's float32 .npy, as a 16-bit
  // PNG holding the same values, and the picture cut out with it (RGBA).
  void mattingOnTheSampleWritesAlphaFiles() {
    QTemporaryDir out;
    const QString sample = QString::fromStdString(resource("samples/astronaut.png"));
    auto r = runCli({"run", sample, "--output", out.path(), "--task", "matting", "--device", "cpu", "--dtype",
                     "fp32", "--matting-model",
                     QString::fromStdString(fixture("golden/matting/model.safetensors"))});
    QVERIFY2(!r.crashed && r.exitCode == 0, qPrintable(describe(r)));
    const QJsonObject manifest = readJson(out.path() + "/results.json");
    const QJsonObject outputs = manifest["inputs"].toArray()[0].toObject()["outputs"].toObject();
    for (const char* kind : {"alpha", "alpha_npy", "cutout"}) {
      QVERIFY2(outputs.contains(kind), kind);
      QVERIFY2(QFile::exists(outputs[kind].toString()), kind);
    }
    const QString stem = out.path() + "/astronaut";
    const cv::Mat alpha = readNpyFloat(stem + ".alpha.npy");
    QCOMPARE(alpha.type(), CV_32FC1);
    QCOMPARE(alpha.cols, 512);
    QCOMPARE(alpha.rows, 512);
    double lo = 0, hi = 0;
    cv::minMaxLoc(alpha, &lo, &hi);
    QVERIFY2(lo >= 0.0 && hi <= 1.0 && hi > lo, qPrintable(QString("alpha in [%1, %2]").arg(lo).arg(hi)));

    const cv::Mat png = cv::imread((stem + ".alpha.png").toStdString(), cv::IMREAD_UNCHANGED);
    QCOMPARE(png.type(), CV_16UC1);
    cv::Mat scaled;
    alpha.convertTo(scaled, CV_32F, 65535.0);
    cv::Mat pngFloat;
    png.convertTo(pngFloat, CV_32F);
    QVERIFY(cv::norm(scaled, pngFloat, cv::NORM_INF) <= 0.5001);

    const cv::Mat cutout = cv::imread((stem + ".cutout.png").toStdString(), cv::IMREAD_UNCHANGED);
    const cv::Mat picture = cv::imread(sample.toStdString(), cv::IMREAD_COLOR);
    QCOMPARE(cutout.type(), CV_8UC4);
    cv::Mat channels[4];
    cv::split(cutout, channels);
    cv::Mat colours;
    cv::merge(channels, 3, colours);
    QCOMPARE(cv::norm(colours, picture, cv::NORM_INF), 0.0);
    cv::Mat alpha8;
    alpha.convertTo(alpha8, CV_32F, 255.0);
    cv::Mat cutoutAlpha;
    channels[3].convertTo(cutoutAlpha, CV_32F);
    QVERIFY(cv::norm(alpha8, cutoutAlpha, cv::NORM_INF) <= 0.5001);
  }

  void badPicturesAreReportedAndTheOthersComplete() {
    QTemporaryDir in, out;
    QVERIFY(QFile::copy(QString::fromStdString(resource("samples/astronaut.png")), in.path() + "/good.png"));
    QFile corrupt(in.path() + "/corrupt.png");
    QVERIFY(corrupt.open(QIODevice::WriteOnly));
    corrupt.write("\x89PNG\r\n\x1a\n this is not a picture");
    corrupt.close();
    QVERIFY(QFile::link(in.path() + "/gone.png", in.path() + "/dangling.png"));

    auto r =
        runCli(QStringList{"run", in.path(), "--output", out.path(), "--task", "seg", "--device", "cpu",
                           "--seg-model", QString::fromStdString(fixture("golden/seg/model.safetensors"))});
    QVERIFY(!r.crashed);
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.err.contains("corrupt.png"), qPrintable(r.err));
    QVERIFY2(r.err.contains("dangling.png"), qPrintable(r.err));
    QVERIFY(QFile::exists(out.path() + "/good.seg.png"));
    const QJsonObject manifest = readJson(out.path() + "/results.json");
    QCOMPARE(manifest["succeeded"].toInt(), 1);
    QCOMPARE(manifest["failed"].toInt(), 2);
  }

  void aMismatchedModelFailsItsTaskOnly() {
    QTemporaryDir out;
    auto r =
        runCli(QStringList{"run", QString::fromStdString(resource("samples/astronaut.png")), "--output",
                           out.path(), "--task", "seg,normal", "--device", "cpu", "--seg-model",
                           QString::fromStdString(fixture("golden/pose/model.safetensors")), "--normal-model",
                           QString::fromStdString(fixture("golden/normal/model.safetensors"))});
    QVERIFY(!r.crashed);
    QCOMPARE(r.exitCode, 3);
    QVERIFY2(r.err.contains("pose") && r.err.contains("seg"), qPrintable(r.err));
    QVERIFY(QFile::exists(out.path() + "/astronaut.normal.png"));
    QVERIFY(!QFile::exists(out.path() + "/astronaut.seg.png"));
  }

  // --dtype auto (the default) records what it ran and why; SAPIENS_CPU_BF16=0 takes native bf16 away
  // (auto falls back to fp32, said in the log and results.json), =1 forces bf16.
  void autoPrecisionIsRecordedWithItsReason() {
    const QStringList common{"run",         QString::fromStdString(resource("samples/astronaut.png")),
                             "--task",      "seg",
                             "--device",    "cpu",
                             "--seg-model", QString::fromStdString(fixture("golden/seg/model.safetensors"))};
    QTemporaryDir off, forced, explicitFp32;
    auto r = runCli(common + QStringList{"--output", off.path()}, 300000, {"SAPIENS_CPU_BF16=0"});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    QVERIFY2(r.err.contains("CPU precision auto: fp32, no native bf16"), qPrintable(r.err));
    QJsonObject manifest = readJson(off.path() + "/results.json");
    QCOMPARE(manifest["dtype"].toString(), QString("fp32"));
    QCOMPARE(manifest["dtype_requested"].toString(), QString("auto"));
    const QString reason = manifest["dtype_reason"].toString();
    QVERIFY2(reason.startsWith("auto on the CPU: fp32, no native bf16 ("), qPrintable(reason));
    // The hardware's answer is kept; the switch is named where it made the difference.
    const bool hardware = sapiens::cpu::hasAvx512Bf16() || sapiens::cpu::hasAmxBf16();
    QVERIFY2(
        reason.contains(hardware ? "turned off by SAPIENS_CPU_BF16=0" : "neither avx512_bf16 nor amx_bf16"),
        qPrintable(reason));

    r = runCli(common + QStringList{"--output", forced.path()}, 300000, {"SAPIENS_CPU_BF16=1"});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    manifest = readJson(forced.path() + "/results.json");
    QCOMPARE(manifest["dtype"].toString(), QString("bf16"));
    QVERIFY2(manifest["dtype_reason"].toString().contains("forced by SAPIENS_CPU_BF16=1"),
             qPrintable(manifest["dtype_reason"].toString()));
    QVERIFY2(r.err.contains("seg model: ") && r.err.contains("bf16 on cpu"), qPrintable(r.err));

    r = runCli(common + QStringList{"--output", explicitFp32.path(), "--dtype", "fp32"}, 300000,
               {"SAPIENS_CPU_BF16=1"});
    QVERIFY2(r.exitCode == 0, qPrintable(describe(r)));
    manifest = readJson(explicitFp32.path() + "/results.json");
    QCOMPARE(manifest["dtype"].toString(), QString("fp32"));
    QCOMPARE(manifest["dtype_requested"].toString(), QString("fp32"));
    QCOMPARE(manifest["dtype_reason"].toString(), QString("requested"));
    QVERIFY2(!r.err.contains("CPU precision auto"), qPrintable(r.err));  // nothing decided, nothing measured

    r = runCli(common + QStringList{"--output", explicitFp32.path(), "--dtype", "int8"});
    QVERIFY(!r.crashed && r.exitCode != 0);
    QVERIFY2(r.err.contains("expected auto, fp32, bf16 or fp16"), qPrintable(r.err));
  }

  // Reading the next pictures and writing the last results overlap the analysis only within
  // --overlap-memory; beyond it each group waits, and writes the same files.
  void aRunBeyondItsOverlapMemoryWaitsAndWritesTheSame() {
    QTemporaryDir in, overlapped, waited;
    const cv::Mat sample = cv::imread(resource("samples/astronaut.png"));
    QVERIFY(!sample.empty());
    for (int i = 0; i < 3; ++i) {
      cv::Mat picture;
      cv::resize(sample, picture, cv::Size(160 + 40 * i, 200), 0, 0, cv::INTER_AREA);
      QVERIFY(cv::imwrite((in.path() + QString("/p%1.png").arg(i)).toStdString(), picture));
    }
    const QStringList common =
        QStringList{"run",          in.path(),
                    "--task",       "seg",
                    "--device",     "cpu",
                    "--input-size", "64x48",
                    "--seg-model",  QString::fromStdString(fixture("golden/seg/model.safetensors"))};
    auto r1 = runCli(common + QStringList{"--output", overlapped.path()});
    auto r2 = runCli(common + QStringList{"--output", waited.path(), "--overlap-memory", "0"});
    QVERIFY2(r1.exitCode == 0, qPrintable(describe(r1)));
    QVERIFY2(r2.exitCode == 0, qPrintable(describe(r2)));
    const QJsonObject overlap1 = readJson(overlapped.path() + "/results.json")["overlap"].toObject();
    const QJsonObject overlap2 = readJson(waited.path() + "/results.json")["overlap"].toObject();
    QCOMPARE(overlap1["groups_waited"].toInt(), 0);
    QCOMPARE(overlap2["groups_waited"].toInt(), 3);
    QCOMPARE(overlap2["budget_bytes"].toInt(), 0);
    QVERIFY2(r2.err.contains("such groups wait"), qPrintable(r2.err));
    for (int i = 0; i < 3; ++i) {
      const QString name = QString("/p%1.seg.png").arg(i);
      QFile a(overlapped.path() + name), b(waited.path() + name);
      QVERIFY2(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly), qPrintable(name));
      QVERIFY2(a.readAll() == b.readAll(), qPrintable(name + " differs"));
    }
  }

  // --batch N stacks the pictures of a group into one forward pass (pose: all their person crops); each
  // picture must come out as it does alone, and a corrupt picture in the group must fail alone.
  void batchedRunMatchesOneByOne() {
    QTemporaryDir in, one, batched;
    const cv::Mat sample = cv::imread(resource("samples/astronaut.png"));
    QVERIFY(!sample.empty());
    cv::Mat mirrored, smaller;
    cv::flip(sample, mirrored, 1);
    cv::resize(mirrored, smaller, cv::Size(300, 420), 0, 0, cv::INTER_AREA);
    QVERIFY(cv::imwrite((in.path() + "/a.png").toStdString(), sample));
    QVERIFY(cv::imwrite((in.path() + "/c.png").toStdString(), smaller));
    QFile corrupt(in.path() + "/b.png");
    QVERIFY(corrupt.open(QIODevice::WriteOnly));
    corrupt.write("\x89PNG\r\n\x1a\n truncated");
    corrupt.close();

    const QStringList common{"run",      in.path(), "--task",       "seg,pose,normal",
                             "--device", "cpu",     "--input-size", "256x192"};
    const QStringList models = allFixtureModels();
    auto r1 = runCli(common + QStringList{"--output", one.path(), "--batch", "1"} + models);
    auto r3 = runCli(common + QStringList{"--output", batched.path(), "--batch", "3"} + models);
    for (const auto* r : {&r1, &r3}) {
      QVERIFY2(!r->crashed, qPrintable(r->err));
      QCOMPARE(r->exitCode, 3);
      QVERIFY2(r->err.contains("b.png"), qPrintable(r->err));
    }
    const QJsonObject manifest = readJson(batched.path() + "/results.json");
    QCOMPARE(manifest["batch_size"].toInt(), 3);
    QCOMPARE(manifest["succeeded"].toInt(), 2);
    QCOMPARE(manifest["failed"].toInt(), 1);

    for (const QString stem : {"a", "c"}) {
      const cv::Mat labels1 =
          cv::imread((one.path() + "/" + stem + ".seg.png").toStdString(), cv::IMREAD_UNCHANGED);
      const cv::Mat labels3 =
          cv::imread((batched.path() + "/" + stem + ".seg.png").toStdString(), cv::IMREAD_UNCHANGED);
      QVERIFY(!labels1.empty() && labels1.size() == labels3.size());
      QVERIFY2(cv::countNonZero(labels1 != labels3) <= static_cast<int>(labels1.total() / 1000),
               qPrintable(stem + ": segmentation differs"));

      const cv::Mat normals1 = readNpyFloat(one.path() + "/" + stem + ".normal.npy");
      const cv::Mat normals3 = readNpyFloat(batched.path() + "/" + stem + ".normal.npy");
      QVERIFY(!normals1.empty() && normals1.size() == normals3.size());
      QVERIFY2(cv::norm(normals1, normals3, cv::NORM_L1) / double(normals1.total() * 3) < 1e-4,
               qPrintable(stem + ": normals differ"));

      const QJsonObject pose1 = readJson(one.path() + "/" + stem + ".pose.json");
      const QJsonObject pose3 = readJson(batched.path() + "/" + stem + ".pose.json");
      const QJsonArray instances1 = pose1["frames"].toArray()[0].toObject()["instances"].toArray();
      const QJsonArray instances3 = pose3["frames"].toArray()[0].toObject()["instances"].toArray();
      QVERIFY(!instances1.isEmpty());
      QCOMPARE(instances3.size(), instances1.size());
      // Batched products round differently; on the tiny random model's flat heatmaps the DARK step turns
      // that into up to ~0.1 px (heatmap cells are ~10 image pixels here). A real difference (wrong crop,
      // wrong picture) moves keypoints by many pixels.
      for (qsizetype i = 0; i < instances1.size(); ++i) {
        const QJsonArray k1 = instances1[i].toObject()["keypoints"].toArray();
        const QJsonArray k3 = instances3[i].toObject()["keypoints"].toArray();
        QCOMPARE(k3.size(), k1.size());
        for (qsizetype j = 0; j < k1.size(); ++j) {
          const QJsonArray p1 = k1[j].toArray(), p3 = k3[j].toArray();
          QVERIFY2(
              std::hypot(p1[0].toDouble() - p3[0].toDouble(), p1[1].toDouble() - p3[1].toDouble()) < 0.25,
              qPrintable(QString("%1: keypoint %2 moved").arg(stem).arg(j)));
        }
      }
    }
  }

  // --shard K/N: N jobs into one folder take disjoint contiguous parts; merge gives the single run's list.
  void shardsCoverEveryPictureOnceAndMerge() {
    QTemporaryDir in, sharded, single;
    const cv::Mat sample = cv::imread(resource("samples/astronaut.png"));
    for (int i = 0; i < 5; ++i) {
      cv::Mat picture;
      cv::resize(sample, picture, cv::Size(96 + 16 * i, 128), 0, 0, cv::INTER_AREA);
      QVERIFY(cv::imwrite(QString("%1/p%2.png").arg(in.path()).arg(i).toStdString(), picture));
    }
    const QStringList common{"run",          in.path(),
                             "--task",       "seg",
                             "--device",     "cpu",
                             "--input-size", "128x96",
                             "--seg-model",  QString::fromStdString(fixture("golden/seg/model.safetensors"))};
    QSet<QString> seen;
    for (int k = 1; k <= 3; ++k) {
      auto r = runCli(common + QStringList{"--output", sharded.path(), "--shard", QString("%1/3").arg(k)});
      QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
      const QJsonObject part = readJson(QString("%1/results.shard-%2-of-3.json").arg(sharded.path()).arg(k));
      QCOMPARE(part["shard"].toObject()["inputs_total"].toInt(), 5);
      for (const auto& entry : part["inputs"].toArray()) {
        const QString input = entry.toObject()["input"].toString();
        QVERIFY2(!seen.contains(input), qPrintable(input + " in two shards"));
        seen.insert(input);
      }
    }
    QCOMPARE(seen.size(), 5);
    QVERIFY(!QFile::exists(sharded.path() + "/results.json"));

    auto merged = runCli({"merge", sharded.path()});
    QVERIFY2(merged.exitCode == 0, qPrintable(merged.out + merged.err));
    auto r = runCli(common + QStringList{"--output", single.path()});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    const QJsonArray mergedInputs = readJson(sharded.path() + "/results.json")["inputs"].toArray();
    const QJsonArray singleInputs = readJson(single.path() + "/results.json")["inputs"].toArray();
    QCOMPARE(mergedInputs.size(), singleInputs.size());
    for (qsizetype i = 0; i < singleInputs.size(); ++i) {
      QCOMPARE(mergedInputs[i].toObject()["input"], singleInputs[i].toObject()["input"]);
      const QString stem = QFileInfo(singleInputs[i].toObject()["input"].toString()).completeBaseName();
      const cv::Mat a =
          cv::imread((sharded.path() + "/" + stem + ".seg.png").toStdString(), cv::IMREAD_UNCHANGED);
      const cv::Mat b =
          cv::imread((single.path() + "/" + stem + ".seg.png").toStdString(), cv::IMREAD_UNCHANGED);
      QVERIFY(!a.empty() && a.size() == b.size() && cv::countNonZero(a != b) == 0);
    }

    QFile::remove(QString("%1/results.shard-2-of-3.json").arg(sharded.path()));
    auto incomplete = runCli({"merge", sharded.path()});
    QCOMPARE(incomplete.exitCode, 1);
    QVERIFY2(incomplete.err.contains("2 of 3 missing"), qPrintable(incomplete.err));
    auto bad = runCli(common + QStringList{"--output", sharded.path(), "--shard", "4/3"});
    QCOMPARE(bad.exitCode, 2);
  }

  void missingInputsAndBadOptionsAreUsageErrors() {
    QTemporaryDir out;
    auto r = runCli({"run", "/nonexistent/folder", "--output", out.path(), "--task", "seg", "--seg-model",
                     QString::fromStdString(fixture("golden/seg/model.safetensors"))});
    QVERIFY(!r.crashed);
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("/nonexistent/folder"), qPrintable(r.err));
    r = runCli({"run", "x.png", "--output", out.path(), "--task", "dance"});
    QVERIFY(r.exitCode != 0);
    QVERIFY2(r.err.contains("dance"), qPrintable(r.err));
    r = runCli({"run", "x.png", "--output", out.path(), "--task", "seg", "--batch", "0"});
    QCOMPARE(r.exitCode, 2);
    QVERIFY2(r.err.contains("--batch"), qPrintable(r.err));
  }
};

QTEST_APPLESS_MAIN(CliRunTest)
#include "test_cli_run.moc"
