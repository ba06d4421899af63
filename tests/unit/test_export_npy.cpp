// .npy files: what NumPy's np.load needs (magic, version 1.0, a header dict padded to 64 bytes, raw
// little-endian C-order data), read back exactly, and clear errors for broken files.

#include "sapiens/export/npy.h"
#include "sapiens/io/export_error.h"
#include "test_support.h"

#include <QDir>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QtTest>

#include <opencv2/core.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace {

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

/// The header dict of a version 1.0 file, checked the way NumPy's reader checks it.
struct ParsedHeader {
  QString descr;
  QString fortranOrder;
  QString shape;
  std::size_t dataOffset = 0;
};

ParsedHeader parseHeader(const std::string& bytes) {
  ParsedHeader parsed;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0 || bytes[6] != 1 || bytes[7] != 0)
    return parsed;
  const std::size_t length = static_cast<unsigned char>(bytes[8]) | static_cast<unsigned char>(bytes[9]) << 8;
  parsed.dataOffset = 10 + length;
  const QString dict = QString::fromStdString(bytes.substr(10, length));
  static const QRegularExpression pattern(
      R"(^\{'descr': '([^']*)', 'fortran_order': (True|False), 'shape': (\([0-9, ]*\)), \} *\n$)");
  const auto match = pattern.match(dict);
  if (!match.hasMatch()) return parsed;
  parsed.descr = match.captured(1);
  parsed.fortranOrder = match.captured(2);
  parsed.shape = match.captured(3);
  return parsed;
}

/// A version 2.0 .npy file (4-byte header length), as NumPy writes for very large headers.
std::string version2File(const std::string& dict, const std::string& data) {
  std::string header = dict;
  while ((12 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string file = "\x93NUMPY";
  file += '\x02';
  file += '\x00';
  const auto length = static_cast<std::uint32_t>(header.size());
  for (int i = 0; i < 4; ++i) file += static_cast<char>((length >> (8 * i)) & 0xff);
  return file + header + data;
}

}  // namespace

class TestExportNpy : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void floatMapHasNumpyHeaderAndExactData();
  void uint8AndInt64AndScalarShapes();
  void nonContinuousMatrixIsWrittenInRowOrder();
  void readsVersion2BoolAndHalfFiles();
  void int64LabelsBecomeMatOrFailWhenTooLarge();
  void brokenFilesNameThePathAndReason();
  void writingIntoMissingFolderFailsWithoutLeavingFiles();
};

void TestExportNpy::floatMapHasNumpyHeaderAndExactData() {
  QTemporaryDir dir;
  cv::Mat map(5, 7, CV_32FC3);
  cv::randn(map, 0.0, 10.0);
  map.at<cv::Vec3f>(0, 0) = {std::numeric_limits<float>::quiet_NaN(), -0.0f,
                             std::numeric_limits<float>::infinity()};
  const std::string path = dir.filePath("normal.npy").toStdString();
  sapiens::writeNpy(path, map);

  const std::string bytes = readBytes(path);
  const ParsedHeader header = parseHeader(bytes);
  QCOMPARE(header.descr, QString("<f4"));
  QCOMPARE(header.fortranOrder, QString("False"));
  QCOMPARE(header.shape, QString("(5, 7, 3)"));
  QCOMPARE(header.dataOffset % 64, std::size_t{0});
  QCOMPARE(bytes.size(), header.dataOffset + map.total() * 3 * sizeof(float));
  QVERIFY(std::memcmp(bytes.data() + header.dataOffset, map.data, map.total() * 3 * sizeof(float)) == 0);

  const sapiens::NpyArray array = sapiens::readNpy(path);
  QCOMPARE(array.type, sapiens::NpyType::Float32);
  QCOMPARE(array.shape, (std::vector<std::size_t>{5, 7, 3}));
  QVERIFY(std::memcmp(array.values<float>(), map.data, map.total() * 3 * sizeof(float)) == 0);
  const cv::Mat back = sapiens::npyToMat(array);
  QCOMPARE(back.type(), CV_32FC3);
  QVERIFY(std::memcmp(back.data, map.data, map.total() * 3 * sizeof(float)) == 0);
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, array.values<std::int64_t>());
}

void TestExportNpy::uint8AndInt64AndScalarShapes() {
  QTemporaryDir dir;
  cv::Mat labels(3, 4, CV_8UC1);
  for (int i = 0; i < 12; ++i) labels.data[i] = static_cast<uchar>(i * 20);
  const std::string labelPath = dir.filePath("labels.npy").toStdString();
  sapiens::writeNpy(labelPath, labels);
  QCOMPARE(parseHeader(readBytes(labelPath)).descr, QString("|u1"));
  QCOMPARE(parseHeader(readBytes(labelPath)).shape, QString("(3, 4)"));
  const auto labelArray = sapiens::readNpy(labelPath);
  QCOMPARE(labelArray.type, sapiens::NpyType::UInt8);
  QVERIFY(std::memcmp(labelArray.values<std::uint8_t>(), labels.data, 12) == 0);

  const std::vector<std::int64_t> ids = {-5, 0, 7, std::numeric_limits<std::int64_t>::max(), 42, 1, -1};
  const std::string idPath = dir.filePath("ids.npy").toStdString();
  sapiens::writeNpy(idPath, ids.data(), {ids.size()});
  const ParsedHeader idHeader = parseHeader(readBytes(idPath));
  QCOMPARE(idHeader.descr, QString("<i8"));
  QCOMPARE(idHeader.shape, QString("(7,)"));  // a 1-tuple, as Python spells it
  const auto idArray = sapiens::readNpy(idPath);
  QCOMPARE(idArray.shape, std::vector<std::size_t>{7});
  QCOMPARE(std::vector<std::int64_t>(idArray.values<std::int64_t>(), idArray.values<std::int64_t>() + 7),
           ids);

  const float scale = 0.731f;
  const std::string scalarPath = dir.filePath("scale.npy").toStdString();
  sapiens::writeNpy(scalarPath, &scale, {});
  QCOMPARE(parseHeader(readBytes(scalarPath)).shape, QString("()"));
  const auto scalar = sapiens::readNpy(scalarPath);
  QCOMPARE(scalar.count(), std::size_t{1});
  QCOMPARE(*scalar.values<float>(), scale);
}

void TestExportNpy::nonContinuousMatrixIsWrittenInRowOrder() {
  QTemporaryDir dir;
  cv::Mat big(6, 6, CV_32FC1);
  for (int i = 0; i < 36; ++i) big.at<float>(i / 6, i % 6) = static_cast<float>(i);
  const cv::Mat roi = big(cv::Rect(1, 2, 3, 2));  // rows 2..3, cols 1..3
  QVERIFY(!roi.isContinuous());
  const std::string path = dir.filePath("roi.npy").toStdString();
  sapiens::writeNpy(path, roi);
  const auto array = sapiens::readNpy(path);
  QCOMPARE(array.shape, (std::vector<std::size_t>{2, 3}));
  const std::vector<float> expected = {13, 14, 15, 19, 20, 21};
  QCOMPARE(std::vector<float>(array.values<float>(), array.values<float>() + 6), expected);
}

void TestExportNpy::readsVersion2BoolAndHalfFiles() {
  QTemporaryDir dir;
  // The official demos save masks as bool and depth as float16.
  const std::string maskPath = dir.filePath("mask.npy").toStdString();
  writeBytes(maskPath, version2File("{'descr': '|b1', 'fortran_order': False, 'shape': (2, 2), }",
                                    std::string("\x01\x00\x00\x01", 4)));
  const auto mask = sapiens::readNpy(maskPath);
  QCOMPARE(mask.type, sapiens::NpyType::Bool);
  const cv::Mat maskMat = sapiens::npyToMat(mask);
  QCOMPARE(maskMat.type(), CV_8UC1);
  QCOMPARE(int(maskMat.at<uchar>(0, 0)), 1);
  QCOMPARE(int(maskMat.at<uchar>(0, 1)), 0);
  QCOMPARE(int(maskMat.at<uchar>(1, 1)), 1);

  const std::string depthPath = dir.filePath("depth.npy").toStdString();
  // 1.5 = 0x3e00 and -2.0 = 0xc000 in IEEE half precision, little-endian.
  writeBytes(depthPath, version2File("{'descr': '<f2', 'fortran_order': False, 'shape': (1, 2), }",
                                     std::string("\x00\x3e\x00\xc0", 4)));
  const cv::Mat depth = sapiens::npyToMat(sapiens::readNpy(depthPath));
  QCOMPARE(depth.type(), CV_32FC1);
  QCOMPARE(depth.at<float>(0, 0), 1.5f);
  QCOMPARE(depth.at<float>(0, 1), -2.0f);
}

void TestExportNpy::int64LabelsBecomeMatOrFailWhenTooLarge() {
  QTemporaryDir dir;
  const std::vector<std::int64_t> labels = {0, 3, 28, 1};
  const std::string path = dir.filePath("seg.npy").toStdString();
  sapiens::writeNpy(path, labels.data(), {2, 2});
  const cv::Mat mat = sapiens::npyToMat(sapiens::readNpy(path));
  QCOMPARE(mat.type(), CV_32SC1);
  QCOMPARE(mat.at<int>(1, 0), 28);

  const std::vector<std::int64_t> huge = {std::int64_t{1} << 40};
  sapiens::writeNpy(path, huge.data(), {1, 1});
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::npyToMat(sapiens::readNpy(path)));
}

void TestExportNpy::brokenFilesNameThePathAndReason() {
  QTemporaryDir dir;
  cv::Mat map(4, 4, CV_32FC1, cv::Scalar(1.0));
  const std::string good = dir.filePath("good.npy").toStdString();
  sapiens::writeNpy(good, map);
  const std::string bytes = readBytes(good);

  auto expectError = [&](const std::string& name, const std::string& contents, const QString& reason) {
    const std::string path = dir.filePath(QString::fromStdString(name)).toStdString();
    writeBytes(path, contents);
    try {
      sapiens::readNpy(path);
      QFAIL(qPrintable("no error for " + QString::fromStdString(name)));
    } catch (const sapiens::ExportError& error) {
      QCOMPARE(error.path(), path);
      QVERIFY2(QString(error.what()).contains(reason), error.what());
    }
  };
  expectError("truncated.npy", bytes.substr(0, bytes.size() - 4), "truncated");
  expectError("text.npy", "just some text, no magic", "not a .npy");
  std::string fortran = bytes;
  fortran.replace(fortran.find("False"), 5, "True ");
  expectError("fortran.npy", fortran, "Fortran");
  std::string bigEndian = bytes;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  expectError("big.npy", bigEndian, ">f4");

  try {
    sapiens::readNpy(dir.filePath("absent.npy").toStdString());
    QFAIL("no error for a missing file");
  } catch (const sapiens::ExportError& error) {
    QVERIFY2(QString(error.what()).contains("absent.npy"), error.what());
  }
}

void TestExportNpy::writingIntoMissingFolderFailsWithoutLeavingFiles() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("missing/map.npy").toStdString();
  cv::Mat map(2, 2, CV_32FC1, cv::Scalar(0.5));
  try {
    sapiens::writeNpy(path, map);
    QFAIL("writing into a missing folder succeeded");
  } catch (const sapiens::IoError& error) {
    QVERIFY2(QString(error.what()).contains(QString::fromStdString(path)), error.what());
  }
  QVERIFY(QDir(dir.path()).entryList(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot).isEmpty());

  cv::Mat doubles(2, 2, CV_64FC1, cv::Scalar(0.5));
  const std::string doublePath = dir.filePath("double.npy").toStdString();
  QVERIFY_THROWS_EXCEPTION(sapiens::ExportError, sapiens::writeNpy(doublePath, doubles));
  QVERIFY(!QFile::exists(QString::fromStdString(doublePath)));
}

QTEST_APPLESS_MAIN(TestExportNpy)
#include "test_export_npy.moc"
