// media/image_io: what readImageBgr hands the models and views, and how it refuses bad files.

#include "test_support.h"

#include "sapiens/media/image_io.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>

#include <string>

namespace {

std::string pathIn(const QTemporaryDir& dir, const char* name) {
  return dir.filePath(QLatin1String(name)).toStdString();
}

void writeBytes(const std::string& path, const QByteArray& bytes) {
  QFile file(QString::fromStdString(path));
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(bytes);
}

// Calls readImageBgr and returns the MediaError's message, or "" when nothing was thrown.
QString readError(const std::string& path) {
  try {
    sapiens::readImageBgr(path);
  } catch (const sapiens::MediaError& e) {
    if (e.path() != path)
      return QStringLiteral("wrong path in the error: ") + QString::fromStdString(e.path());
    return QString::fromStdString(e.what());
  }
  return {};
}

// A JPEG with an EXIF APP1 segment holding only Orientation = `orientation`, inserted after SOI.
QByteArray jpegWithOrientation(const cv::Mat& image, int orientation) {
  std::vector<uchar> encoded;
  cv::imencode(".jpg", image, encoded, {cv::IMWRITE_JPEG_QUALITY, 95});
  const QByteArray tiff = QByteArray("II*\0\x08\0\0\0", 8) + QByteArray("\x01\0", 2) +  // 1 entry
                          QByteArray("\x12\x01\x03\0\x01\0\0\0", 8) + char(orientation) +
                          QByteArray(3, 0) +  // 0x0112
                          QByteArray(4, 0);   // no next IFD
  const QByteArray payload = QByteArray("Exif\0\0", 6) + tiff;
  const int length = int(payload.size()) + 2;
  const QByteArray app1 = QByteArray("\xFF\xE1", 2) + char(length >> 8) + char(length & 0xFF) + payload;
  QByteArray jpeg(reinterpret_cast<const char*>(encoded.data()), int(encoded.size()));
  jpeg.insert(2, app1);
  return jpeg;
}

}  // namespace

class TestImageIo : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void readsTheBundledSampleAsOpenCvDoes() {
    const std::string sample = sapiens::test::resource("samples/astronaut.png");
    const cv::Mat image = sapiens::readImageBgr(sample);
    QCOMPARE(image.type(), CV_8UC3);
    QCOMPARE(image.cols, 512);
    QCOMPARE(image.rows, 512);
    const cv::Mat reference = cv::imread(sample, cv::IMREAD_COLOR);
    QCOMPARE(cv::norm(image, reference, cv::NORM_INF), 0.0);
  }

  void convertsGrayAlphaAnd16Bit() {
    QTemporaryDir dir;
    const std::string gray = pathIn(dir, "gray.png");
    QVERIFY(cv::imwrite(gray, cv::Mat(8, 6, CV_8UC1, cv::Scalar(77))));
    cv::Mat image = sapiens::readImageBgr(gray);
    QCOMPARE(image.type(), CV_8UC3);
    QCOMPARE(image.at<cv::Vec3b>(3, 2), cv::Vec3b(77, 77, 77));

    const std::string alpha = pathIn(dir, "alpha.png");
    QVERIFY(cv::imwrite(alpha, cv::Mat(8, 6, CV_8UC4, cv::Scalar(10, 20, 30, 0))));
    image = sapiens::readImageBgr(alpha);
    QCOMPARE(image.type(), CV_8UC3);
    QCOMPARE(image.at<cv::Vec3b>(0, 0), cv::Vec3b(10, 20, 30));

    const std::string deep = pathIn(dir, "deep.png");
    QVERIFY(cv::imwrite(deep, cv::Mat(8, 6, CV_16UC3, cv::Scalar(0x1234, 0xFF00, 0x00FF))));
    image = sapiens::readImageBgr(deep);
    QCOMPARE(image.type(), CV_8UC3);
    QCOMPARE(image.at<cv::Vec3b>(5, 5), cv::Vec3b(0x12, 0xFF, 0x00));

    const std::string tiff = pathIn(dir, "deep_gray.tif");
    QVERIFY(cv::imwrite(tiff, cv::Mat(4, 4, CV_16UC1, cv::Scalar(0x8000))));
    image = sapiens::readImageBgr(tiff);
    QCOMPARE(image.at<cv::Vec3b>(1, 1), cv::Vec3b(0x80, 0x80, 0x80));
  }

  void encodesFloatImagesAsSrgb() {
    QTemporaryDir dir;
    const std::string exr = pathIn(dir, "linear.exr");
    ::setenv("OPENCV_IO_ENABLE_OPENEXR", "1", 0);  // for writing; reading enables it by itself
    QVERIFY(cv::imwrite(exr, cv::Mat(4, 4, CV_32FC3, cv::Scalar(0.0, 0.214, 2.0))));
    const cv::Mat image = sapiens::readImageBgr(exr);
    QCOMPARE(image.type(), CV_8UC3);
    const cv::Vec3b pixel = image.at<cv::Vec3b>(2, 2);
    QCOMPARE(int(pixel[0]), 0);
    QVERIFY2(std::abs(int(pixel[1]) - 128) <= 1,
             qPrintable(QString::number(pixel[1])));  // linear 0.214 = sRGB 0.5
    QCOMPARE(int(pixel[2]), 255);                     // clamped
  }

  void appliesExifOrientation() {
    QTemporaryDir dir;
    cv::Mat image(20, 40, CV_8UC3, cv::Scalar(255, 255, 255));
    image(cv::Rect(0, 0, 20, 20)).setTo(cv::Scalar(0, 0, 255));  // left half red
    const std::string path = pathIn(dir, "rotated.jpg");
    writeBytes(path, jpegWithOrientation(image, 6));  // 6: rotate 90 degrees clockwise to display
    const cv::Mat shown = sapiens::readImageBgr(path);
    QCOMPARE(shown.cols, 20);
    QCOMPARE(shown.rows, 40);
    const cv::Vec3b top = shown.at<cv::Vec3b>(5, 10);
    const cv::Vec3b bottom = shown.at<cv::Vec3b>(35, 10);
    QVERIFY(top[2] > 200 && top[1] < 60);         // red moved to the top
    QVERIFY(bottom[1] > 200 && bottom[2] > 200);  // white at the bottom
  }

  void refusesBadFilesNamingThem() {
    QTemporaryDir dir;
    QVERIFY(readError(pathIn(dir, "missing.png")).contains(QStringLiteral("missing.png: no such file")));
    QVERIFY(readError(dir.path().toStdString()).contains(QStringLiteral("folder")));

    const std::string empty = pathIn(dir, "empty.jpg");
    writeBytes(empty, {});
    QVERIFY(readError(empty).contains(QStringLiteral("empty.jpg: file is empty")));

    const std::string garbage = pathIn(dir, "garbage.png");
    writeBytes(garbage, QByteArray(2000, 'x'));
    QVERIFY(readError(garbage).contains(QStringLiteral("garbage.png: not a decodable image")));

    // A real PNG signature whose data stops after the header.
    std::vector<uchar> png;
    cv::imencode(".png", cv::Mat(64, 64, CV_8UC3, cv::Scalar(1, 2, 3)), png);
    const std::string truncated = pathIn(dir, "truncated.png");
    writeBytes(truncated, QByteArray(reinterpret_cast<const char*>(png.data()), 40));
    QVERIFY(readError(truncated).contains(QStringLiteral("truncated.png")));

    if (::geteuid() != 0) {  // root reads everything
      const std::string locked = pathIn(dir, "locked.png");
      QVERIFY(cv::imwrite(locked, cv::Mat(4, 4, CV_8UC3)));
      QFile::setPermissions(QString::fromStdString(locked), QFileDevice::WriteOwner);
      QVERIFY(readError(locked).contains(QStringLiteral("locked.png: cannot open for reading")));
    }
  }

  void refusesAbsurdSizesBeforeDecoding_data() {
    QTest::addColumn<QByteArray>("header");
    QTest::addColumn<QString>("name");
    // PNG: signature, IHDR with 100000 x 100000 (10^10 pixels), no image data.
    QTest::newRow("png") << QByteArray(
                                "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\x01\x86\xa0\0\x01\x86\xa0\x08\x02\0\0\0",
                                29)
                         << QStringLiteral("huge.png");
    // JPEG: SOI, SOF0 with 60000 x 60000.
    QTest::newRow("jpeg")
        << QByteArray("\xFF\xD8\xFF\xC0\0\x11\x08\xEA\x60\xEA\x60\x03\x01\x22\0\x02\x11\x01\x03\x11\x01", 21)
        << QStringLiteral("huge.jpg");
    // JPEG: SOI, a comment, bytes that are no marker (libjpeg skips them with a warning), SOF0 60000 x 60000.
    QTest::newRow("jpeg after extraneous bytes")
        << QByteArray(
               "\xFF\xD8\xFF\xFE\0\x04hi\x01\x03\x02\x07\xFF\xC0\0\x11\x08\xEA\x60\xEA\x60\x03\x01\x22\0\x02"
               "\x11\x01\x03\x11\x01",
               31)
        << QStringLiteral("garbage.jpg");
    // BMP: 40000 x -40000 (top-down).
    QByteArray bmp("BM", 2);
    bmp += QByteArray(12, 0);
    bmp += QByteArray("\x28\0\0\0\x40\x9c\0\0\xc0\x63\xff\xff\x01\0\x18\0", 16);
    QTest::newRow("bmp") << bmp << QStringLiteral("huge.bmp");
    // TIFF: one IFD with ImageWidth and ImageLength = 70000 (LONG).
    QByteArray tiff("II*\0\x08\0\0\0\x02\0", 10);
    tiff += QByteArray("\0\x01\x04\0\x01\0\0\0\x70\x11\x01\0", 12);
    tiff += QByteArray("\x01\x01\x04\0\x01\0\0\0\x70\x11\x01\0", 12);
    QTest::newRow("tiff") << tiff << QStringLiteral("huge.tif");
    // EXR: a dataWindow of 10000 x 10000, over the float pictures' limit (8192 x 8192) though under the
    // 8-bit one.
    QByteArray exr("\x76\x2f\x31\x01\x02\0\0\0", 8);
    exr += QByteArray("dataWindow\0box2i\0\x10\0\0\0", 21);
    exr += QByteArray("\0\0\0\0\0\0\0\0\x0f\x27\0\0\x0f\x27\0\0\0", 17);
    QTest::newRow("exr") << exr << QStringLiteral("huge.exr");
  }

  void refusesAbsurdSizesBeforeDecoding() {
    QFETCH(QByteArray, header);
    QFETCH(QString, name);
    QTemporaryDir dir;
    const std::string path = dir.filePath(name).toStdString();
    writeBytes(path, header + QByteArray(256, 0));
    QElapsedTimer timer;
    timer.start();
    const QString error = readError(path);
    QVERIFY2(error.contains(name) && error.contains(QStringLiteral("more than the limit")),
             qPrintable(error));
    QVERIFY(timer.elapsed() < 1000);
  }

  // An EXR header attribute claiming more bytes than the file holds (the fuzzer's finding: OpenEXR
  // allocated and filled the 1.9 GB a 934-byte file's string attribute claimed before failing) is refused
  // by our header check, naming the attribute, whether it comes before or after the dataWindow.
  void refusesAnExrAttributeLongerThanTheFile() {
    auto attribute = [](const char* name, const char* type, quint32 size, const QByteArray& value) {
      QByteArray bytes = QByteArray(name) + '\0' + QByteArray(type) + '\0';
      for (int shift = 0; shift < 32; shift += 8) bytes += char((size >> shift) & 0xFF);
      return bytes + value;
    };
    const QByteArray magic("\x76\x2f\x31\x01\x02\0\0\0", 8);
    const QByteArray window =
        attribute("dataWindow", "box2i", 16, QByteArray("\0\0\0\0\0\0\0\0\x07\0\0\0\x05\0\0\0", 16));
    const QByteArray huge = attribute("comments", "string", 1953067640u, QByteArray("text", 4));
    QTemporaryDir dir;
    for (const QByteArray& header : {magic + huge + window, magic + window + huge}) {
      const std::string path = pathIn(dir, "claims.exr");
      writeBytes(path, header + QByteArray(64, 0));
      const QString error = readError(path);
      QVERIFY2(
          error.contains(QStringLiteral("claims.exr")) &&
              error.contains(QStringLiteral("attribute 'comments' of type 'string' claims 1953067640 bytes")),
          qPrintable(error));
    }
  }

  void makesSmallThumbnails() {
    const std::string sample = sapiens::test::resource("samples/astronaut.png");
    const cv::Mat thumbnail = sapiens::readImageThumbnailBgr(sample, 96);
    QCOMPARE(thumbnail.cols, 96);
    QCOMPARE(thumbnail.rows, 96);
    QCOMPARE(thumbnail.type(), CV_8UC3);
    QTemporaryDir dir;
    const std::string wide = pathIn(dir, "wide.jpg");
    QVERIFY(cv::imwrite(wide, cv::Mat(300, 1200, CV_8UC3, cv::Scalar(0, 128, 255))));
    const cv::Mat small = sapiens::readImageThumbnailBgr(wide, 96);
    QCOMPARE(small.cols, 96);
    QCOMPARE(small.rows, 24);
    QVERIFY(std::abs(int(small.at<cv::Vec3b>(12, 48)[1]) - 128) <= 3);
  }

  void listsImagesByExtensionSorted() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("sub/.git")));
    for (const char* name : {"b.PNG", "A.jpg", "c.jpeg", "d.txt", "e.webp", ".hidden.png", "sub/f.tif",
                             "sub/.git/g.png", "sub/h.EXR", "noext"}) {
      writeBytes(pathIn(dir, name), "x");
    }
    auto names = [&dir](const std::vector<std::string>& paths) {
      QStringList relative;
      for (const auto& p : paths) relative << QDir(dir.path()).relativeFilePath(QString::fromStdString(p));
      return relative;
    };
    QCOMPARE(names(sapiens::listImages(dir.path().toStdString(), false)),
             QStringList({"A.jpg", "b.PNG", "c.jpeg", "e.webp"}));
    QCOMPARE(names(sapiens::listImages(dir.path().toStdString(), true)),
             QStringList({"A.jpg", "b.PNG", "c.jpeg", "e.webp", "sub/f.tif", "sub/h.EXR"}));

    bool threw = false;
    try {
      sapiens::listImages(pathIn(dir, "nowhere"), false);
    } catch (const sapiens::MediaError& e) {
      threw = QString::fromUtf8(e.what()).contains(QStringLiteral("nowhere: no such folder"));
    }
    QVERIFY(threw);
    threw = false;
    try {
      sapiens::listImages(pathIn(dir, "A.jpg"), false);
    } catch (const sapiens::MediaError& e) {
      threw = QString::fromUtf8(e.what()).contains(QStringLiteral("A.jpg: is not a folder"));
    }
    QVERIFY(threw);
  }
};

QTEST_APPLESS_MAIN(TestImageIo)
#include "test_image_io.moc"
