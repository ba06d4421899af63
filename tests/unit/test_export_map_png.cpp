// Segmentation and dense maps as pictures: label PNGs that read back as the labels, the official colour
// blend, and the normal / albedo / depth visualisations with their exact pixel values; writers that fail
// with the path and leave nothing behind.

#include "sapiens/export/map_png.h"
#include "sapiens/export/mask_png.h"
#include "sapiens/export/overlay.h"
#include "sapiens/io/export_error.h"
#include "sapiens/result/seg_classes.h"
#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <fstream>
#include <functional>

namespace {

/// The palette straight from the resource file (RGB), not through our loader.
std::vector<cv::Vec3b> paletteRgbFromResource() {
  std::ifstream in(sapiens::test::resource("data/seg29.json"));
  const auto json = nlohmann::json::parse(in);
  std::vector<cv::Vec3b> palette;
  for (const auto& color : json["palette_rgb"]) {
    palette.emplace_back(color[0].get<int>(), color[1].get<int>(), color[2].get<int>());
  }
  return palette;
}

cv::Mat labelsWithEveryClass(int rows, int cols) {
  cv::Mat labels(rows, cols, CV_8UC1);
  for (int i = 0; i < rows * cols; ++i) labels.data[i] = static_cast<uchar>((i * 7) % 29);
  return labels;
}

cv::Mat pictureOf(int rows, int cols) {
  cv::Mat image(rows, cols, CV_8UC3);
  cv::randu(image, 0, 256);
  return image;
}

/// A folder this process cannot create files in: read-only permissions, or for root (who ignores them)
/// the immutable attribute. Empty path when neither is available here.
class ReadOnlyFolder {
 public:
  explicit ReadOnlyFolder(const QString& path) : path_(path.toStdString()) {
    QDir().mkpath(path);
    if (::geteuid() != 0) {
      ok_ = ::chmod(path_.c_str(), 0555) == 0;
      return;
    }
    const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY);
    int flags = 0;
    if (fd >= 0 && ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
      flags |= FS_IMMUTABLE_FL;
      immutable_ = ok_ = ::ioctl(fd, FS_IOC_SETFLAGS, &flags) == 0;
    }
    if (fd >= 0) ::close(fd);
  }
  ~ReadOnlyFolder() {
    if (immutable_) {
      const int fd = ::open(path_.c_str(), O_RDONLY | O_DIRECTORY);
      int flags = 0;
      if (fd >= 0 && ::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0) {
        flags &= ~FS_IMMUTABLE_FL;
        ::ioctl(fd, FS_IOC_SETFLAGS, &flags);
      }
      if (fd >= 0) ::close(fd);
    } else {
      ::chmod(path_.c_str(), 0755);
    }
  }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
  bool immutable_ = false;
};

}  // namespace

class TestExportMapPng : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void labelPngReadsBackAsTheLabels();
  void segmentationOverlayBlendsThePaletteHalfAndHalf();
  void aTallOverlayIsWrittenInBandsWithTheSamePixels();
  void normalPictureHasOfficialValuesAndBlackBackground();
  void albedoPictureIsRgbToBgrWithGreyBackground();
  void depthPercentilesMatchNumpy();
  void depthPictureIsTurboNearRedFarBlueOnGrey();
  void writersFailWithThePathAndLeaveNothing();
};

void TestExportMapPng::labelPngReadsBackAsTheLabels() {
  QTemporaryDir dir;
  const cv::Mat labels = labelsWithEveryClass(31, 17);
  const std::string path = dir.filePath("frame_seg.png").toStdString();
  sapiens::writeLabelPng(path, labels);
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);
  QCOMPARE(back.type(), CV_8UC1);
  QCOMPARE(cv::countNonZero(back != labels), 0);

  const std::string jpeg = dir.filePath("frame_seg.jpg").toStdString();
  QVERIFY_THROWS_EXCEPTION(sapiens::ExportError, sapiens::writeLabelPng(jpeg, labels));
  cv::Mat wide;
  labels.convertTo(wide, CV_32S);
  QVERIFY_THROWS_EXCEPTION(sapiens::ExportError, sapiens::writeLabelPng(path + ".png", wide));
}

void TestExportMapPng::segmentationOverlayBlendsThePaletteHalfAndHalf() {
  QTemporaryDir dir;
  const cv::Mat labels = labelsWithEveryClass(20, 30);
  const cv::Mat image = pictureOf(20, 30);
  const std::string path = dir.filePath("overlay.png").toStdString();
  sapiens::writeSegmentationOverlay(path, image, labels, sapiens::seg29());
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);
  QCOMPARE(back.type(), CV_8UC3);
  const auto palette = paletteRgbFromResource();
  QCOMPARE(palette.size(), std::size_t{29});
  for (int y = 0; y < labels.rows; ++y) {
    for (int x = 0; x < labels.cols; ++x) {
      const cv::Vec3b rgb = palette[labels.at<uchar>(y, x)];
      const cv::Vec3b pixel = image.at<cv::Vec3b>(y, x);
      for (int c = 0; c < 3; ++c) {
        // cv2.addWeighted(image, 0.5, colour, 0.5, 0) rounds half to even.
        const double blended = 0.5 * pixel[c] + 0.5 * rgb[2 - c];
        QCOMPARE(int(back.at<cv::Vec3b>(y, x)[c]), int(std::nearbyint(blended)));
      }
    }
  }
  // Labels without a class are black in the colour layer.
  cv::Mat unknown(1, 1, CV_8UC1, cv::Scalar(200));
  QCOMPARE(sapiens::colorizeLabels(unknown, sapiens::seg29()).at<cv::Vec3b>(0, 0), cv::Vec3b(0, 0, 0));
}

void TestExportMapPng::aTallOverlayIsWrittenInBandsWithTheSamePixels() {
  // Taller than a band of the writer (64 rows) and of the blend, with a partial last band: the file
  // holds exactly the overlay made in memory, and the note as the PNG's comment.
  QTemporaryDir dir;
  cv::Mat labels(203, 45, CV_8UC1), image(203, 45, CV_8UC3);
  cv::RNG rng(7);
  rng.fill(labels, cv::RNG::UNIFORM, 0, 30);
  rng.fill(image, cv::RNG::UNIFORM, 0, 256);
  const std::string path = dir.filePath("tall.png").toStdString();
  sapiens::writeSegmentationOverlay(path, image, labels, sapiens::seg29(), "made by a test");
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);
  QCOMPARE(back.type(), CV_8UC3);
  QCOMPARE(back.size(), image.size());
  const cv::Mat expected = sapiens::segmentationOverlay(image, labels, sapiens::seg29());
  QCOMPARE(cv::norm(back, expected, cv::NORM_INF), 0.0);
  QFile file(QString::fromStdString(path));
  QVERIFY(file.open(QIODevice::ReadOnly));
  QVERIFY(file.readAll().contains(QByteArray("tEXtComment\0made by a test", 26)));
  QVERIFY_THROWS_EXCEPTION(sapiens::ExportError, sapiens::writeSegmentationOverlay(
                                                     path, image, labels.rowRange(0, 100), sapiens::seg29()));
}

void TestExportMapPng::normalPictureHasOfficialValuesAndBlackBackground() {
  QTemporaryDir dir;
  cv::Mat normal(2, 3, CV_32FC3);
  normal.at<cv::Vec3f>(0, 0) = {1, 0, 0};
  normal.at<cv::Vec3f>(0, 1) = {0, -1, 0};
  normal.at<cv::Vec3f>(0, 2) = {0, 0, 1};
  normal.at<cv::Vec3f>(1, 0) = {0.6f, 0.0f, -0.8f};
  normal.at<cv::Vec3f>(1, 1) = {0.2f, 0.3f, 0.4f};
  normal.at<cv::Vec3f>(1, 2) = {0, 0, -1};
  cv::Mat foreground(2, 3, CV_8UC1, cv::Scalar(1));
  foreground.at<uchar>(1, 2) = 0;
  const std::string path = dir.filePath("normal.png").toStdString();
  sapiens::writeNormalPng(path, normal, foreground);
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);
  QCOMPARE(back.type(), CV_8UC3);
  // (B, G, R) = (z, y, x) mapped by trunc((n + 1) / 2 * 255)
  QCOMPARE(back.at<cv::Vec3b>(0, 0), cv::Vec3b(127, 127, 255));
  QCOMPARE(back.at<cv::Vec3b>(0, 1), cv::Vec3b(127, 0, 127));
  QCOMPARE(back.at<cv::Vec3b>(0, 2), cv::Vec3b(255, 127, 127));
  QCOMPARE(back.at<cv::Vec3b>(1, 0), cv::Vec3b(25, 127, 204));
  const auto trunc = [](float n) { return static_cast<uchar>((n + 1.0f) / 2.0f * 255.0f); };
  QCOMPARE(back.at<cv::Vec3b>(1, 1), cv::Vec3b(trunc(0.4f), trunc(0.3f), trunc(0.2f)));
  QCOMPARE(back.at<cv::Vec3b>(1, 2), cv::Vec3b(0, 0, 0));  // background
}

void TestExportMapPng::albedoPictureIsRgbToBgrWithGreyBackground() {
  QTemporaryDir dir;
  cv::Mat albedo(1, 3, CV_32FC3);
  albedo.at<cv::Vec3f>(0, 0) = {1.0f, 0.5f, 0.0f};
  albedo.at<cv::Vec3f>(0, 1) = {1.7f, -0.2f, 0.999f};
  albedo.at<cv::Vec3f>(0, 2) = {0.3f, 0.3f, 0.3f};
  cv::Mat foreground = (cv::Mat_<uchar>(1, 3) << 1, 5, 0);
  const std::string path = dir.filePath("albedo.png").toStdString();
  sapiens::writeAlbedoPng(path, albedo, foreground);
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);
  QCOMPARE(back.at<cv::Vec3b>(0, 0), cv::Vec3b(0, 127, 255));
  QCOMPARE(back.at<cv::Vec3b>(0, 1), cv::Vec3b(254, 0, 255));  // clamped, truncated
  QCOMPARE(back.at<cv::Vec3b>(0, 2), cv::Vec3b(100, 100, 100));
}

void TestExportMapPng::depthPercentilesMatchNumpy() {
  cv::Mat depth(10, 10, CV_32FC1);
  for (int i = 0; i < 100; ++i) depth.at<float>(i / 10, i % 10) = static_cast<float>(100 - i);  // 100 .. 1
  depth.at<float>(0, 0) = std::nanf("");  // ignored: 99 values 1 .. 99 remain
  const auto range = sapiens::foregroundDepthRange(depth);
  QVERIFY(range.has_value());
  // numpy.percentile(np.arange(1, 100), [1, 99]) = [1.98, 98.02]
  QVERIFY(std::abs(range->nearDepth - 1.98f) < 1e-5f);
  QVERIFY(std::abs(range->farDepth - 98.02f) < 1e-4f);

  cv::Mat background(10, 10, CV_8UC1, cv::Scalar(0));
  QVERIFY(!sapiens::foregroundDepthRange(depth, background).has_value());

  sapiens::DepthRange video{3.0f, 5.0f};
  video.include({2.5f, 4.0f});
  video.include({4.0f, 7.5f});
  QCOMPARE(video.nearDepth, 2.5f);
  QCOMPARE(video.farDepth, 7.5f);
}

void TestExportMapPng::depthPictureIsTurboNearRedFarBlueOnGrey() {
  QTemporaryDir dir;
  // A pointmap: depth grows from 1 m (left) to 5 m (right); the top row is background.
  cv::Mat pointmap(4, 50, CV_32FC3);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 50; ++x) pointmap.at<cv::Vec3f>(y, x) = {0.0f, 0.0f, 1.0f + 4.0f * x / 49.0f};
  }
  cv::Mat labels(4, 50, CV_8UC1, cv::Scalar(3));
  labels.row(0).setTo(0);
  const std::string path = dir.filePath("depth.png").toStdString();
  sapiens::writeDepthPng(path, pointmap, labels);
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);

  cv::Mat ends = (cv::Mat_<uchar>(1, 2) << 255, 0);
  cv::Mat turbo;
  cv::applyColorMap(ends, turbo, cv::COLORMAP_TURBO);
  QCOMPARE(back.at<cv::Vec3b>(2, 0), turbo.at<cv::Vec3b>(0, 0));   // nearest: the red end
  QCOMPARE(back.at<cv::Vec3b>(2, 49), turbo.at<cv::Vec3b>(0, 1));  // farthest: the blue end
  QVERIFY(back.at<cv::Vec3b>(2, 0)[2] > back.at<cv::Vec3b>(2, 0)[0]);
  QVERIFY(back.at<cv::Vec3b>(2, 49)[0] > back.at<cv::Vec3b>(2, 49)[2]);
  for (int x = 0; x < 50; ++x) QCOMPARE(back.at<cv::Vec3b>(0, x), cv::Vec3b(100, 100, 100));

  // With a wider (video-wide) range the same frame uses less of the colour map.
  const cv::Mat wide = sapiens::depthImage(pointmap, labels, sapiens::DepthRange{0.5f, 10.0f});
  QVERIFY(wide.at<cv::Vec3b>(2, 0) != turbo.at<cv::Vec3b>(0, 0));
  QCOMPARE(cv::countNonZero(sapiens::depthImage(pointmap, labels, std::nullopt).reshape(1) != 100), 0);
}

void TestExportMapPng::writersFailWithThePathAndLeaveNothing() {
  QTemporaryDir dir;
  const cv::Mat labels = labelsWithEveryClass(8, 8);
  const cv::Mat normal(8, 8, CV_32FC3, cv::Scalar(0, 0, -1));
  const std::vector<std::pair<QString, std::function<void(const std::string&)>>> writers = {
      {"labels.png", [&](const std::string& p) { sapiens::writeLabelPng(p, labels); }},
      {"overlay.png",
       [&](const std::string& p) {
         sapiens::writeSegmentationOverlay(p, pictureOf(8, 8), labels, sapiens::seg29());
       }},
      {"normal.png", [&](const std::string& p) { sapiens::writeNormalPng(p, normal); }},
      {"albedo.png", [&](const std::string& p) { sapiens::writeAlbedoPng(p, normal); }},
      {"depth.png", [&](const std::string& p) { sapiens::writeDepthPng(p, normal); }},
  };
  auto expectFailure = [&](const QString& folder, bool mustExist) {
    for (const auto& [name, write] : writers) {
      const std::string path = (folder + "/" + name).toStdString();
      try {
        write(path);
        QFAIL(qPrintable("wrote " + QString::fromStdString(path)));
      } catch (const sapiens::IoError& error) {
        QVERIFY2(QString(error.what()).contains(QString::fromStdString(path)), error.what());
      }
    }
    if (mustExist) {
      QVERIFY(QDir(folder).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).isEmpty());
    } else {
      QVERIFY(!QDir(folder).exists());
    }
  };
  expectFailure(dir.filePath("missing"), false);

  const QString readOnly = dir.filePath("read-only");
  ReadOnlyFolder guard(readOnly);
  if (!guard.ok()) QSKIP("cannot make a read-only folder here");
  expectFailure(readOnly, true);
}

QTEST_APPLESS_MAIN(TestExportMapPng)
#include "test_export_map_png.moc"
