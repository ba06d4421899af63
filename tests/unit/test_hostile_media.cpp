// Hostile media, generated at test time: every picture of the corpus (tests/support/hostile_media.h)
// comes out upright as 8-bit BGR or is refused with a MediaError naming it, quickly and before any huge
// allocation; every broken video (empty, text, cut, noisy header, subtitles or audio only) ends in a
// MediaError naming it. Never a crash. test_cli_hostile_media runs the same corpus as one batch.

#include "hostile_media.h"
#include "test_support.h"

#include "sapiens/media/frame_source.h"
#include "sapiens/media/image_io.h"
#include "sapiens/media/media_error.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <string>

namespace {

bool runFfmpeg(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral("ffmpeg"),
                QStringList{QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-y")} + arguments);
  if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit ||
      process.exitCode() != 0) {
    qWarning() << "ffmpeg" << arguments << "failed:" << process.readAllStandardError();
    return false;
  }
  return true;
}

QByteArray readBytes(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// Opens `path` as a frame source and pulls every frame. Returns the MediaError's message ("" if none)
// and counts the frames that came before it.
QString readVideo(const std::string& path, int& frames) {
  frames = 0;
  try {
    std::unique_ptr<sapiens::FrameSource> source = sapiens::openFrameSource(path);
    while (source->next()) {
      if (++frames > 1000) return QStringLiteral("runaway: more than 1000 frames");
    }
  } catch (const sapiens::MediaError& e) {
    if (e.path() != path)
      return QStringLiteral("wrong path in the error: ") + QString::fromStdString(e.path());
    return QString::fromStdString(e.what());
  }
  return {};
}

}  // namespace

class TestHostileMedia : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void picturesDecodeUprightOrAreRefusedNamingThem() {
    QTemporaryDir dir;
    const auto corpus = sapiens::test::writeHostileImages(dir.path());
    QVERIFY(!corpus.empty());
    for (const auto& item : corpus) {
      const std::string path = dir.filePath(item.name).toStdString();
      for (const bool thumbnail : {false, true}) {
        const QString what = item.name + (thumbnail ? " (thumbnail)" : "");
        QElapsedTimer timer;
        timer.start();
        cv::Mat image;
        QString error;
        try {
          image = thumbnail ? sapiens::readImageThumbnailBgr(path, 4096) : sapiens::readImageBgr(path);
        } catch (const sapiens::MediaError& e) {
          error = QString::fromStdString(e.what());
          QCOMPARE(e.path(), path);
        }
        QVERIFY2(timer.elapsed() < 2000, qPrintable(what + QString(": %1 ms").arg(timer.elapsed())));
        if (item.decodes) {
          QVERIFY2(error.isEmpty(), qPrintable(what + ": " + error));
          QCOMPARE(image.type(), CV_8UC3);
          QVERIFY2(image.cols == item.width && image.rows == item.height,
                   qPrintable(what + QString(": %1x%2").arg(image.cols).arg(image.rows)));
        } else {
          QVERIFY2(!error.isEmpty(), qPrintable(what + ": decoded, expected a refusal"));
          QVERIFY2(error.startsWith(QString::fromStdString(path) + ": "), qPrintable(error));
          QVERIFY2(error.contains(item.reason), qPrintable(what + ": " + error));
          QVERIFY2(!error.contains('\n'), qPrintable(error));
        }
      }
    }
  }

  // The decodable oddities keep their content: CMYK colours, gray levels, the EXIF rotation.
  void oddPicturesKeepTheirContent() {
    QTemporaryDir dir;
    QVERIFY(!sapiens::test::writeHostileImages(dir.path()).empty());
    auto read = [&dir](const char* name) { return sapiens::readImageBgr(dir.filePath(name).toStdString()); };

    const cv::Mat cmyk = read("cmyk.jpg");
    const cv::Vec3b red = cmyk.at<cv::Vec3b>(4, 2);
    const cv::Vec3b blue = cmyk.at<cv::Vec3b>(4, 13);
    QVERIFY2(red[2] > 200 && red[0] < 60 && red[1] < 60, "left half of the CMYK JPEG is not red");
    QVERIFY2(blue[0] > 200 && blue[1] < 60 && blue[2] < 60, "right half of the CMYK JPEG is not blue");

    QCOMPARE(read("gray16.png").at<cv::Vec3b>(5, 5), cv::Vec3b(0x80, 0x80, 0x80));
    const cv::Vec3b gray = read("gray.jpg").at<cv::Vec3b>(5, 5);
    QVERIFY(gray[0] == gray[1] && gray[1] == gray[2] && std::abs(int(gray[0]) - 90) <= 2);

    // Orientation 8: shown after a quarter turn anticlockwise.
    const std::string rotatedPath = dir.filePath("exif_rotated.jpg").toStdString();
    const cv::Mat stored = cv::imread(rotatedPath, cv::IMREAD_COLOR | cv::IMREAD_IGNORE_ORIENTATION);
    QCOMPARE(stored.cols, 40);
    cv::Mat upright;
    cv::rotate(stored, upright, cv::ROTATE_90_COUNTERCLOCKWISE);
    QCOMPARE(cv::norm(read("exif_rotated.jpg"), upright, cv::NORM_INF), 0.0);

    // A wrong extension changes nothing: the content decides.
    const cv::Mat pngNamedJpg = read("png_named.jpg");
    QCOMPARE(cv::norm(pngNamedJpg, cv::imread(dir.filePath("png_named.jpg").toStdString()), cv::NORM_INF),
             0.0);
  }

  void brokenVideosEndWithAnErrorNamingThem_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("reason");
    QTest::newRow("empty") << QStringLiteral("empty.mp4") << QStringLiteral("");
    QTest::newRow("text named .mp4") << QStringLiteral("text.mp4") << QStringLiteral("not a readable video");
    QTest::newRow("a PNG's head named .mkv") << QStringLiteral("png_head.mkv") << QStringLiteral("");
    QTest::newRow("first 100 bytes") << QStringLiteral("header_only.mp4") << QStringLiteral("");
    QTest::newRow("cut at 40%") << QStringLiteral("cut.mp4") << QStringLiteral("");
    QTest::newRow("noise over the first 2 KB") << QStringLiteral("noisy_head.mp4") << QStringLiteral("");
    QTest::newRow("cut mkv") << QStringLiteral("cut.mkv") << QStringLiteral("");
    QTest::newRow("subtitles only") << QStringLiteral("subtitles.mkv") << QStringLiteral("no video stream");
    QTest::newRow("audio only (wav)") << QStringLiteral("tone.wav") << QStringLiteral("no video stream");
  }

  void brokenVideosEndWithAnErrorNamingThem() {
    QFETCH(QString, name);
    QFETCH(QString, reason);
    QTemporaryDir dir;
    const QString path = dir.filePath(name);
    auto makeVideo = [&dir](const QString& file) {
      return runFfmpeg({"-f", "lavfi", "-i", "testsrc=size=96x64:rate=15", "-t", "2", "-c:v", "mpeg4", "-g",
                        "5", "-pix_fmt", "yuv420p", dir.filePath(file)});
    };
    auto cut = [](const QString& from, const QString& to, double fraction) {
      const QByteArray bytes = readBytes(from);
      return !bytes.isEmpty() &&
             sapiens::test::hostile::writeFile(to, bytes.left(int(double(bytes.size()) * fraction)));
    };
    if (name == "empty.mp4") {
      QVERIFY(sapiens::test::hostile::writeFile(path, {}));
    } else if (name == "text.mp4") {
      QVERIFY(sapiens::test::hostile::writeFile(path, QByteArray("no video here\n").repeated(300)));
    } else if (name == "png_head.mkv") {
      const QByteArray png = sapiens::test::hostile::encoded(".png", sapiens::test::hostile::noise(64, 64));
      QVERIFY(sapiens::test::hostile::writeFile(path, png.left(200)));
    } else if (name == "header_only.mp4") {
      QVERIFY(makeVideo("source.mp4"));
      QVERIFY(sapiens::test::hostile::writeFile(path, readBytes(dir.filePath("source.mp4")).left(100)));
    } else if (name == "cut.mp4") {
      QVERIFY(makeVideo("source.mp4"));
      QVERIFY(cut(dir.filePath("source.mp4"), path, 0.4));
    } else if (name == "noisy_head.mp4") {
      QVERIFY(makeVideo("source.mp4"));
      QByteArray bytes = readBytes(dir.filePath("source.mp4"));
      QRandomGenerator generator(11);
      for (int i = 0; i < 2048 && i < bytes.size(); ++i) bytes[i] = char(generator.bounded(256));
      QVERIFY(sapiens::test::hostile::writeFile(path, bytes));
    } else if (name == "cut.mkv") {
      QVERIFY(makeVideo("source.mkv"));
      QVERIFY(cut(dir.filePath("source.mkv"), path, 0.4));
    } else if (name == "subtitles.mkv") {
      const QString srt = dir.filePath("subtitles.srt");
      QVERIFY(sapiens::test::hostile::writeFile(srt, "1\n00:00:00,000 --> 00:00:01,000\nHello\n\n"));
      QVERIFY(runFfmpeg({"-i", srt, "-c:s", "srt", path}));
    } else if (name == "tone.wav") {
      QVERIFY(runFfmpeg({"-f", "lavfi", "-i", "sine=duration=0.3", path}));
    }
    int frames = 0;
    QElapsedTimer timer;
    timer.start();
    const QString error = readVideo(path.toStdString(), frames);
    QVERIFY2(timer.elapsed() < 10000, qPrintable(QString("%1 ms").arg(timer.elapsed())));
    QVERIFY2(!error.isEmpty(), qPrintable(QString("no error after %1 frames").arg(frames)));
    QVERIFY2(error.startsWith(path + ": "), qPrintable(error));
    QVERIFY2(error.contains(reason), qPrintable(error));
    QVERIFY(frames < 30);  // 2 s at 15 fps, cut: never all of them
  }
};

QTEST_APPLESS_MAIN(TestHostileMedia)
#include "test_hostile_media.moc"
