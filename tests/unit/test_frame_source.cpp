// media/frame_source: still images and folders as frame sources, the synthetic live camera (real-time
// clock, latest frame wins, drop count), the V4L2 camera's listing and refusals, and openFrameSource's
// choice of source.

#include "media_error_message.h"
#include "test_support.h"

#include "sapiens/media/camera_source.h"
#include "sapiens/media/frame_number_pattern.h"
#include "sapiens/media/image_io.h"
#include "sapiens/media/image_sequence_source.h"
#include "sapiens/media/synthetic_live_source.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>

namespace {

using sapiens::test::mediaError;

}  // namespace

class TestFrameSource : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void frameNumberPatternRoundTrips() {
    for (std::int64_t n : {0, 1, 2, 1000, 65535, 65536 + 5}) {
      const cv::Mat picture = sapiens::frameNumberPicture(64, 48, n);
      QCOMPARE(sapiens::readFrameNumber(picture).value_or(-1), n % sapiens::kFrameNumberModulus);
    }
    QVERIFY(!sapiens::readFrameNumber(cv::Mat(48, 64, CV_8UC3, cv::Scalar(128, 128, 128))).has_value());
    cv::Mat tampered = sapiens::frameNumberPicture(64, 48, 6);
    tampered(cv::Rect(48, 28, 16, 10)).setTo(cv::Scalar(255, 255, 255));  // flip the lowest data bit
    QVERIFY(!sapiens::readFrameNumber(tampered).has_value());             // the check row disagrees
  }

  void singleImageIsOneFrame() {
    const std::string sample = sapiens::test::resource("samples/astronaut.png");
    const auto source = sapiens::openFrameSource(sample);
    QCOMPARE(source->info().width, 512);
    QCOMPARE(source->info().height, 512);
    QCOMPARE(source->info().frameCount, std::int64_t{1});
    QVERIFY(!source->info().live);
    const auto frame = source->next();
    QVERIFY(frame.has_value());
    QCOMPARE(frame->index, std::int64_t{0});
    QCOMPARE(cv::norm(frame->bgr, sapiens::readImageBgr(sample), cv::NORM_INF), 0.0);
    QVERIFY(!source->next().has_value());
    source->seek(0);
    QVERIFY(source->next().has_value());

    QTemporaryDir dir;
    const std::string broken = dir.filePath(QStringLiteral("broken.png")).toStdString();
    QFile file(QString::fromStdString(broken));
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("not a png");
    file.close();
    QVERIFY(mediaError([&] { sapiens::openFrameSource(broken); }).contains(QStringLiteral("broken.png")));
  }

  // A folder hands out its images in listImages order; a bad one throws naming it, and the next call goes
  // on with the image after it.
  void folderListsImagesAndReportsABadOne() {
    QTemporaryDir dir;
    for (int i : {0, 1, 3})
      QVERIFY(cv::imwrite(dir.filePath(QStringLiteral("f%1.png").arg(i)).toStdString(),
                          sapiens::frameNumberPicture(64, 48, i)));
    QFile bad(dir.filePath(QStringLiteral("f2.png")));
    QVERIFY(bad.open(QIODevice::WriteOnly));
    bad.write(QByteArray(100, 'x'));
    bad.close();

    const auto source = sapiens::openFrameSource(dir.path().toStdString());
    QCOMPARE(source->info().frameCount, std::int64_t{4});
    QVERIFY(source->seekable());
    for (int i : {0, 1}) {
      const auto frame = source->next();
      QCOMPARE(frame->index, std::int64_t{i});
      QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), std::int64_t{i});
      QCOMPARE(frame->timestampSeconds, i / 25.0);
    }
    QVERIFY(mediaError([&] { source->next(); }).contains(QStringLiteral("f2.png")));
    auto frame = source->next();
    QCOMPARE(frame->index, std::int64_t{3});
    QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), std::int64_t{3});
    QVERIFY(!source->next().has_value());
    source->seek(1);
    frame = source->next();
    QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), std::int64_t{1});
    QVERIFY(mediaError([&] { source->seek(4); }).contains(QStringLiteral("4 of 4")));

    QTemporaryDir empty;
    QVERIFY(mediaError([&] {
              sapiens::openFrameSource(empty.path().toStdString());
            }).contains(QStringLiteral("no images in the folder")));
  }

  // Pulled as fast as it produces, every frame arrives; pulled slowly, the newest frame arrives and the
  // ones in between are dropped and counted, so latency stays under one frame period.
  void syntheticLiveSourceDropsWhenPulledSlowly() {
    sapiens::SyntheticLiveOptions options;
    options.width = 64;
    options.height = 48;
    options.fps = 50;
    sapiens::SyntheticLiveSource source(options);
    QElapsedTimer clock;  // started after the source's clock: never ahead of it
    clock.start();
    QVERIFY(source.info().live);
    QVERIFY(!source.seekable());
    QVERIFY(!mediaError([&] { source.seek(3); }).isEmpty());

    std::int64_t delivered = 0;
    std::int64_t last = -1;
    for (int i = 0; i < 5; ++i, ++delivered) {
      const auto frame = source.next();
      QVERIFY(frame->index > last);
      last = frame->index;
    }
    const std::int64_t droppedWhileFast = source.droppedFrames();
    QVERIFY2(droppedWhileFast <= 2, qPrintable(QString::number(droppedWhileFast)));  // allows a stall

    for (int i = 0; i < 4; ++i, ++delivered) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a slow model: 5 periods per frame
      const double due = clock.nsecsElapsed() * 1e-9 * options.fps;
      const auto frame = source.next();
      QVERIFY(frame.has_value());
      // The newest frame: produced no earlier than just before the call.
      QVERIFY2(frame->index >= static_cast<std::int64_t>(due) && frame->index >= last + 4,
               qPrintable(QStringLiteral("index %1 due %2").arg(frame->index).arg(due)));
      QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), frame->index);
      QCOMPARE(frame->timestampSeconds, frame->index / options.fps);
      last = frame->index;
    }
    // Every frame produced up to the last one was either delivered or counted.
    QCOMPARE(source.droppedFrames(), last + 1 - delivered);
    QVERIFY(source.droppedFrames() >= 4 * 4);
  }

  void syntheticLiveSourceEndsFailsAndCloses() {
    sapiens::SyntheticLiveOptions options;
    options.width = 32;
    options.height = 40;
    options.fps = 200;
    options.frameLimit = 5;
    sapiens::SyntheticLiveSource limited(options);
    int count = 0;
    while (limited.next()) ++count;
    QVERIFY(count >= 1 && count <= 5);
    QCOMPARE(limited.droppedFrames() + count, std::int64_t{5});

    options.frameLimit = -1;
    options.failAtFrame = 3;
    sapiens::SyntheticLiveSource unplugged(options);
    QString error;
    for (int i = 0; i < 10 && error.isEmpty(); ++i) error = mediaError([&] { unplugged.next(); });
    QVERIFY2(error.contains(QStringLiteral("frame 3")), qPrintable(error));

    // close() from another thread wakes a next() that waits for a slow camera.
    options.failAtFrame = -1;
    options.fps = 0.5;
    sapiens::SyntheticLiveSource slow(options);
    QVERIFY(slow.next().has_value());  // frame 0 is there at once
    QElapsedTimer timer;
    timer.start();
    auto waiting = std::async(std::launch::async, [&slow] { return slow.next().has_value(); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    slow.close();
    QVERIFY(!waiting.get());
    QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));
  }

  void testPatternCameraOpensByName() {
    auto source = sapiens::openFrameSource("synthetic:64x48@15");
    QVERIFY(source->info().live);
    QCOMPARE(source->info().width, 64);
    QCOMPARE(source->info().height, 48);
    QCOMPARE(source->info().fps, 15.0);
    const auto first = source->next();
    QVERIFY(first);
    QCOMPARE(first->bgr.cols, 64);
    QCOMPARE(sapiens::readFrameNumber(first->bgr).value_or(-1), first->index);

    const auto defaults = sapiens::parseSyntheticSourceName("synthetic:");
    QVERIFY(defaults);
    QCOMPARE(defaults->width, sapiens::SyntheticLiveOptions{}.width);
    QCOMPARE(sapiens::parseSyntheticSourceName("synthetic:@60")->fps, 60.0);
    QVERIFY(!sapiens::parseSyntheticSourceName("/dev/video0"));
    for (const char* bad :
         {"synthetic:64", "synthetic:64x", "synthetic:64x48@", "synthetic:64x48@fast", "synthetic:8x8",
          "synthetic:64x48@0", "synthetic:99999999999x48", "synthetic:64x48 "}) {
      QVERIFY2(mediaError([bad] { sapiens::openFrameSource(bad); }).contains(QStringLiteral("WIDTHxHEIGHT")),
               bad);
    }
  }

  void camerasAreListedAndBadDevicesRefused() {
    for (const auto& camera : sapiens::listCameras()) {  // none on a build machine; real ones elsewhere
      QVERIFY(QString::fromStdString(camera.path).startsWith(QLatin1String("/dev/video")));
      QVERIFY(!camera.name.empty());
    }
    QVERIFY(mediaError([] {
              sapiens::openFrameSource("/dev/video987");
            }).contains(QStringLiteral("/dev/video987: no such camera")));
    QVERIFY(mediaError([] {
              sapiens::CameraSource camera("/dev/null");
            }).contains(QStringLiteral("/dev/null: is not a V4L2 device")));
  }
};

QTEST_APPLESS_MAIN(TestFrameSource)
#include "test_frame_source.moc"
