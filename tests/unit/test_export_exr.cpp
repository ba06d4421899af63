// OpenEXR maps: 32-bit float channels named R, G, B (x, y, z in that order) or Y, values back exactly, and
// a clear error for maps that are not float.

#include "sapiens/export/exr.h"
#include "sapiens/io/export_error.h"
#include "test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <cstring>
#include <fstream>
#include <sstream>

namespace {

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

/// The "channels" attribute of an OpenEXR header: each name with its pixel type (2 = FLOAT, 1 = HALF).
std::vector<std::pair<std::string, int>> exrChannels(const std::string& bytes) {
  std::vector<std::pair<std::string, int>> channels;
  const std::string key = std::string("channels\0chlist\0", 16);
  auto at = bytes.find(key);
  if (bytes.compare(0, 4, "\x76\x2f\x31\x01") != 0 || at == std::string::npos) return channels;
  at += key.size() + 4;  // attribute size
  while (at < bytes.size() && bytes[at] != '\0') {
    const auto end = bytes.find('\0', at);
    std::string name = bytes.substr(at, end - at);
    std::int32_t type = 0;
    std::memcpy(&type, bytes.data() + end + 1, 4);
    channels.emplace_back(std::move(name), type);
    at = end + 1 + 16;  // pixel type, pLinear + reserved, x and y sampling
  }
  return channels;
}

}  // namespace

class TestExportExr : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void init();
  void pointmapChannelsAreRgbFloat();
  void depthIsOneFloatChannel();
  void nonFloatMapsAreRefusedNamingTheFile();
};

void TestExportExr::init() {
  std::string reason;
  if (!sapiens::exrWritingSupported(&reason))
    QSKIP(qPrintable("no OpenEXR in this OpenCV build: " + QString::fromStdString(reason)));
}

void TestExportExr::pointmapChannelsAreRgbFloat() {
  QTemporaryDir dir;
  cv::Mat pointmap(9, 13, CV_32FC3);
  for (int y = 0; y < 9; ++y) {
    for (int x = 0; x < 13; ++x)
      pointmap.at<cv::Vec3f>(y, x) = {0.1f * x - 0.6f, -0.37f * y, 2.0f + 0.001f * (x * y)};
  }
  const std::string path = dir.filePath("pointmap.exr").toStdString();
  sapiens::writeExr(path, pointmap);

  const auto channels = exrChannels(readBytes(path));
  const std::vector<std::pair<std::string, int>> expected = {{"B", 2}, {"G", 2}, {"R", 2}};  // sorted, FLOAT
  QCOMPARE(channels, expected);
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);
  QCOMPARE(back.type(), CV_32FC3);
  for (int y = 0; y < 9; ++y) {
    for (int x = 0; x < 13; ++x) {
      const cv::Vec3f source = pointmap.at<cv::Vec3f>(y, x);
      const cv::Vec3f read = back.at<cv::Vec3f>(y, x);  // OpenCV order B, G, R
      QCOMPARE(read[2], source[0]);                     // R = x
      QCOMPARE(read[1], source[1]);                     // G = y
      QCOMPARE(read[0], source[2]);                     // B = z
    }
  }
}

void TestExportExr::depthIsOneFloatChannel() {
  QTemporaryDir dir;
  cv::Mat depth(5, 4, CV_32FC1);
  cv::randu(depth, 0.5, 80.0);
  const std::string path = dir.filePath("depth.exr").toStdString();
  sapiens::writeExr(path, depth);
  const auto channels = exrChannels(readBytes(path));
  QCOMPARE(channels.size(), std::size_t{1});
  QCOMPARE(channels[0].second, 2);
  const cv::Mat back = cv::imread(path, cv::IMREAD_UNCHANGED);
  QCOMPARE(back.type(), CV_32FC1);
  QCOMPARE(cv::countNonZero(back != depth), 0);
}

void TestExportExr::nonFloatMapsAreRefusedNamingTheFile() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("image.exr").toStdString();
  try {
    sapiens::writeExr(path, cv::Mat(4, 4, CV_8UC3, cv::Scalar(1, 2, 3)));
    QFAIL("an 8-bit picture was written as EXR");
  } catch (const sapiens::ExportError& error) {
    QCOMPARE(error.path(), path);
    QVERIFY2(QString(error.what()).contains("CV_8UC3"), error.what());
  }
  const std::string missing = dir.filePath("missing/depth.exr").toStdString();
  try {
    sapiens::writeExr(missing, cv::Mat(4, 4, CV_32FC1, cv::Scalar(1)));
    QFAIL("wrote into a missing folder");
  } catch (const sapiens::IoError& error) {
    QVERIFY2(QString(error.what()).contains(QString::fromStdString(missing)), error.what());
  }
  QVERIFY(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).isEmpty());
}

QTEST_APPLESS_MAIN(TestExportExr)
#include "test_export_exr.moc"
