// media/video_file_source + video_writer: videos this test makes itself (with VideoWriter, or the ffmpeg
// CLI for codecs, containers and metadata the writer does not produce) read back frame by frame. Every
// frame carries its number in its pixels (frame_number_pattern.h), so order, seeking and dropping are
// checked on the pictures themselves.

#include "file_size_limit.h"
#include "media_error_message.h"
#include "test_support.h"

#include "sapiens/media/frame_number_pattern.h"
#include "sapiens/media/frame_source.h"
#include "sapiens/media/image_io.h"
#include "sapiens/media/video_concat.h"
#include "sapiens/media/video_file_source.h"
#include "sapiens/media/video_writer.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

namespace {

constexpr int kWidth = 96;
constexpr int kHeight = 80;

sapiens::VideoWriterOptions smallVideo() {
  sapiens::VideoWriterOptions options;
  options.width = kWidth;
  options.height = kHeight;
  return options;
}

std::string pathIn(const QTemporaryDir& dir, const QString& name) {
  return dir.filePath(name).toStdString();
}

// Writes `count` numbered frames; frame i is shown at timestamp(i).
void writeNumberedVideo(const std::string& path, int count, const std::function<double(int)>& timestamp,
                        sapiens::VideoWriterOptions options = {}) {
  if (options.width == 0) options.width = kWidth;
  if (options.height == 0) options.height = kHeight;
  sapiens::VideoWriter writer(path, options);
  for (int i = 0; i < count; ++i)
    writer.write(sapiens::frameNumberPicture(options.width, options.height, i), timestamp(i));
  writer.finish();
}

void writeNumberedVideo(const std::string& path, int count, double fps = 30, int keyframeInterval = 0) {
  sapiens::VideoWriterOptions options;
  options.fps = fps;
  options.keyframeInterval = keyframeInterval;
  writeNumberedVideo(
      path, count, [fps](int i) { return i / fps; }, options);
}

// Runs Debian's ffmpeg CLI; fails the test when it is missing or fails.
bool runFfmpeg(const QStringList& arguments) {
  QProcess process;
  process.start(QStringLiteral("ffmpeg"),
                QStringList{QStringLiteral("-v"), QStringLiteral("error"), QStringLiteral("-y")} + arguments);
  if (!process.waitForFinished(60000) || process.exitStatus() != QProcess::NormalExit ||
      process.exitCode() != 0) {
    qWarning() << "ffmpeg" << arguments << "failed:" << process.readAllStandardError()
               << process.errorString();
    return false;
  }
  return true;
}

// Presentation times (seconds) of the video packets, read with libavformat alone: an independent check of
// what VideoWriter stored.
std::vector<double> packetTimestamps(const std::string& path) {
  std::vector<double> times;
  AVFormatContext* format = nullptr;
  if (avformat_open_input(&format, path.c_str(), nullptr, nullptr) < 0) return times;
  if (avformat_find_stream_info(format, nullptr) >= 0) {
    const int video = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    AVPacket* packet = av_packet_alloc();
    while (video >= 0 && av_read_frame(format, packet) >= 0) {
      if (packet->stream_index == video && !(packet->flags & AV_PKT_FLAG_DISCARD))
        times.push_back(static_cast<double>(packet->pts) * av_q2d(format->streams[video]->time_base));
      av_packet_unref(packet);
    }
    av_packet_free(&packet);
  }
  avformat_close_input(&format);
  std::sort(times.begin(), times.end());
  return times;
}

struct ReadResult {
  std::vector<sapiens::Frame> frames;
  QString error;  // the MediaError's message, empty when the video ended normally
  std::string errorPath;
};

ReadResult readAll(sapiens::FrameSource& source) {
  ReadResult result;
  try {
    while (auto frame = source.next()) result.frames.push_back(std::move(*frame));
  } catch (const sapiens::MediaError& e) {
    result.error = QString::fromStdString(e.what());
    result.errorPath = e.path();
  }
  return result;
}

// Checks that frames[i] is frame i: its index and the number in its pixels.
bool framesInOrder(const std::vector<sapiens::Frame>& frames, QString& why) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const auto number = sapiens::readFrameNumber(frames[i].bgr);
    if (frames[i].index != static_cast<std::int64_t>(i) || !number ||
        *number != static_cast<std::int64_t>(i)) {
      why = QStringLiteral("position %1: index %2, number %3")
                .arg(i)
                .arg(frames[i].index)
                .arg(number ? QString::number(*number) : QStringLiteral("unreadable"));
      return false;
    }
  }
  return true;
}

using sapiens::test::mediaError;

}  // namespace

class TestVideoIo : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void readsEveryWrittenFrameInOrder() {
    QTemporaryDir dir;
    const std::string path = pathIn(dir, QStringLiteral("numbered.mp4"));
    sapiens::VideoWriterOptions options;
    options.width = kWidth;
    options.height = kHeight;
    options.fps = 30;
    {
      sapiens::VideoWriter writer(path, options);
      // H.264 when this FFmpeg has an encoder for it (Debian's does), else the documented fallback.
      const bool haveH264 = avcodec_find_encoder_by_name("libx264") != nullptr;
      QCOMPARE(QString::fromStdString(writer.encoderName()),
               haveH264 ? QStringLiteral("libx264") : QStringLiteral("mpeg4"));
      for (int i = 0; i < 48; ++i) writer.write(sapiens::frameNumberPicture(kWidth, kHeight, i), i / 30.0);
      QCOMPARE(writer.framesWritten(), std::int64_t{48});
      writer.finish();
    }
    const auto source = sapiens::openFrameSource(path);
    const sapiens::SourceInfo& info = source->info();
    QCOMPARE(info.width, kWidth);
    QCOMPARE(info.height, kHeight);
    QCOMPARE(info.fps, 30.0);
    QCOMPARE(info.frameCount, std::int64_t{48});
    QVERIFY(std::abs(info.durationSeconds - 1.6) < 1e-6);
    QVERIFY(!info.live);
    QVERIFY(source->seekable());
    const ReadResult read = readAll(*source);
    QVERIFY2(read.error.isEmpty(), qPrintable(read.error));
    QCOMPARE(read.frames.size(), std::size_t{48});
    QString why;
    QVERIFY2(framesInOrder(read.frames, why), qPrintable(why));
    for (int i = 0; i < 48; ++i) {
      QCOMPARE(read.frames[i].bgr.type(), CV_8UC3);
      QVERIFY(std::abs(read.frames[i].timestampSeconds - i / 30.0) < 1e-9);
    }
  }

  void keepsVariableFrameRateTimestamps_data() {
    QTest::addColumn<QString>("encoder");
    QTest::newRow("libx264") << QStringLiteral("libx264");
    QTest::newRow("mpeg4 (the fallback)") << QStringLiteral("mpeg4");
  }

  // Irregular frame intervals in a millisecond time base survive writing, and writing again with the
  // input's own time base (what the annotated-video output does) reproduces them exactly.
  void keepsVariableFrameRateTimestamps() {
    QFETCH(QString, encoder);
    const double gaps[] = {0.033, 0.1, 0.017, 0.25, 0.04};
    std::vector<double> expected;
    double t = 0;
    for (int i = 0; i < 40; ++i, t += gaps[i % 5]) expected.push_back(std::round(t * 1000) / 1000);
    QTemporaryDir dir;
    const std::string first = pathIn(dir, QStringLiteral("vfr.mp4"));
    sapiens::VideoWriterOptions options;
    options.fps = 15;
    options.timeBase = {1, 1000};
    options.encoder = encoder.toStdString();
    writeNumberedVideo(
        first, 40, [&](int i) { return expected[i]; }, options);

    auto compare = [&expected](const std::vector<double>& actual, const char* what) {
      if (actual.size() != expected.size())
        return QStringLiteral("%1: %2 timestamps").arg(what).arg(actual.size());
      for (std::size_t i = 0; i < actual.size(); ++i)
        if (std::abs(actual[i] - expected[i]) > 1e-9)
          return QStringLiteral("%1: frame %2 at %3 s, expected %4 s")
              .arg(what)
              .arg(i)
              .arg(actual[i])
              .arg(expected[i]);
      return QString();
    };
    QString problem = compare(packetTimestamps(first), "packets");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));

    sapiens::VideoFileSource source(first);
    const std::string second = pathIn(dir, QStringLiteral("rewritten.mp4"));
    sapiens::VideoWriterOptions again;
    again.width = source.info().width;
    again.height = source.info().height;
    again.fps = source.info().fps;
    again.timeBase = source.info().timeBase;
    again.encoder = options.encoder;
    std::vector<double> decoded;
    {
      sapiens::VideoWriter writer(second, again);
      while (auto frame = source.next()) {
        decoded.push_back(frame->timestampSeconds);
        QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), frame->index);
        writer.write(*frame);
      }
      writer.finish();
    }
    problem = compare(decoded, "decoded");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
    problem = compare(packetTimestamps(second), "rewritten packets");
    QVERIFY2(problem.isEmpty(), qPrintable(problem));
  }

  void seeksToTheExactFrame_data() {
    QTest::addColumn<QString>("kind");
    QTest::newRow("h264 mp4, keyframe every 10") << QStringLiteral("mp4");
    QTest::newRow("vp9 mkv") << QStringLiteral("mkv");
    QTest::newRow("variable frame rate") << QStringLiteral("vfr");
    QTest::newRow("raw h264, no container timestamps") << QStringLiteral("h264");
  }

  void seeksToTheExactFrame() {
    QFETCH(QString, kind);
    QTemporaryDir dir;
    const std::string mp4 = pathIn(dir, QStringLiteral("seek.mp4"));
    std::string path = mp4;
    std::function<double(int)> time = [](int i) { return i / 30.0; };
    if (kind == QLatin1String("vfr")) {
      time = [](int i) { return i * 0.02 + (i % 3) * 0.005 + (i > 30 ? 0.5 : 0.0); };
      sapiens::VideoWriterOptions options;
      options.timeBase = {1, 1000};
      options.keyframeInterval = 7;
      writeNumberedVideo(mp4, 60, time, options);
    } else {
      writeNumberedVideo(mp4, 60, 30, 10);
    }
    if (kind == QLatin1String("h264")) {
      path = pathIn(dir, QStringLiteral("seek.h264"));
      QVERIFY(runFfmpeg(
          {"-i", QString::fromStdString(mp4), "-c", "copy", "-r", "30", QString::fromStdString(path)}));
    }
    if (kind == QLatin1String("mkv")) {
      path = pathIn(dir, QStringLiteral("seek.mkv"));
      QVERIFY(
          runFfmpeg({"-i", QString::fromStdString(mp4), "-c:v", "libvpx-vp9", "-deadline", "realtime",
                     "-cpu-used", "8", "-g", "12", "-b:v", "0", "-crf", "20", QString::fromStdString(path)}));
    }
    sapiens::VideoFileSource source(path);
    QVERIFY(source.seekable());
    // Forwards and backwards, onto, just before and just after keyframes, both ends.
    for (int k : {25, 0, 9, 10, 11, 59, 1, 19, 20, 21, 35, 3, 58}) {
      source.seek(k);
      const auto frame = source.next();
      QVERIFY2(frame.has_value(), qPrintable(QStringLiteral("nothing after seeking to %1").arg(k)));
      QCOMPARE(frame->index, std::int64_t{k});
      QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), std::int64_t{k});
      QVERIFY2(std::abs(frame->timestampSeconds - time(k)) < 1e-3,
               qPrintable(QStringLiteral("frame %1 at %2 s").arg(k).arg(frame->timestampSeconds)));
      if (k < 59) {  // reading on continues from there
        const auto following = source.next();
        QVERIFY(following.has_value());
        QCOMPARE(following->index, std::int64_t{k + 1});
        QCOMPARE(sapiens::readFrameNumber(following->bgr).value_or(-1), std::int64_t{k + 1});
      }
    }
    QVERIFY(mediaError([&] { source.seek(60); }).contains(QStringLiteral("frame 60")));
    QVERIFY(!mediaError([&] { source.seek(-1); }).isEmpty());
    source.seek(57);
    const ReadResult tail = readAll(source);
    QVERIFY(tail.error.isEmpty());
    QCOMPARE(tail.frames.size(), std::size_t{3});
    QCOMPARE(tail.frames.back().index, std::int64_t{59});
  }

  // Two MPEG-TS parts whose times both start at zero, joined byte for byte (as `cat a.ts b.ts` makes them):
  // the times cannot number the frames, so reading counts them and a seek must count the same way,
  // landing on the picture reading gives at that position in either part, before or after a read
  // passed the jump (the fuzzer's finding: seek(1) gave a later frame, seeks into the second part failed).
  void seeksInPartsJoinedEachFromZero() {
    QTemporaryDir dir;
    const std::string numbered = pathIn(dir, QStringLiteral("numbered.mp4"));
    writeNumberedVideo(numbered, 24, 30, 6);
    QByteArray bytes;
    for (const char* trim : {"trim=end_frame=12", "trim=start_frame=12"}) {
      const QString part = dir.filePath(QStringLiteral("part.ts"));
      QVERIFY(runFfmpeg({"-i", QString::fromStdString(numbered), "-vf",
                         QStringLiteral("%1,setpts=PTS-STARTPTS").arg(trim), "-c:v", "libx264", "-g", "6",
                         "-pix_fmt", "yuv420p", "-f", "mpegts", part}));
      QFile file(part);
      QVERIFY(file.open(QIODevice::ReadOnly));
      bytes += file.readAll();
    }
    const std::string joined = pathIn(dir, QStringLiteral("joined.ts"));
    QFile out(QString::fromStdString(joined));
    QVERIFY(out.open(QIODevice::WriteOnly) && out.write(bytes) == bytes.size());
    out.close();

    sapiens::VideoFileSource reading(joined);
    const ReadResult all = readAll(reading);
    QVERIFY2(all.error.isEmpty(), qPrintable(all.error));
    QCOMPARE(all.frames.size(), std::size_t{24});
    QString why;
    QVERIFY2(framesInOrder(all.frames, why), qPrintable(why));
    for (const bool readFirst : {false, true}) {
      sapiens::VideoFileSource source(joined);
      for (int i = 0; readFirst && i < 16; ++i) QVERIFY(source.next().has_value());
      for (int k : {1, 15, 3, 12, 23, 11, 0}) {
        source.seek(k);
        const auto frame = source.next();
        QVERIFY2(frame.has_value(), qPrintable(QStringLiteral("nothing after seeking to %1").arg(k)));
        QCOMPARE(frame->index, std::int64_t{k});
        QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), std::int64_t{k});
        QCOMPARE(frame->timestampSeconds, all.frames[static_cast<std::size_t>(k)].timestampSeconds);
      }
    }
  }

  void decodesOtherContainersCodecsAndPixelFormats_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("encoding");
    QTest::newRow("mkv vp9 yuv422p") << QStringLiteral("a.mkv")
                                     << QStringList{"-c:v",      "libvpx-vp9", "-pix_fmt",  "yuv422p",
                                                    "-deadline", "realtime",   "-cpu-used", "8",
                                                    "-b:v",      "0",          "-crf",      "20"};
    QTest::newRow("webm vp8 yuv420p")
        << QStringLiteral("a.webm") << QStringList{"-c:v", "libvpx", "-b:v", "1M"};
    QTest::newRow("mp4 h264 yuv444p")
        << QStringLiteral("a.mp4")
        << QStringList{"-c:v", "libx264", "-pix_fmt", "yuv444p", "-preset", "ultrafast"};
    QTest::newRow("mov prores 10-bit 4:2:2")
        << QStringLiteral("a.mov") << QStringList{"-c:v", "prores_ks", "-pix_fmt", "yuv422p10le"};
    QTest::newRow("avi mjpeg full range")
        << QStringLiteral("a.avi") << QStringList{"-c:v", "mjpeg", "-pix_fmt", "yuvj422p", "-q:v", "3"};
    QTest::newRow("mkv ffv1 gray") << QStringLiteral("a.mkv")
                                   << QStringList{"-c:v", "ffv1", "-pix_fmt", "gray"};
    QTest::newRow("mkv ffv1 rgb") << QStringLiteral("a.mkv")
                                  << QStringList{"-c:v", "ffv1", "-pix_fmt", "bgr0"};
    QTest::newRow("mpeg-ts h264") << QStringLiteral("a.ts") << QStringList{"-c:v", "copy"};
  }

  void decodesOtherContainersCodecsAndPixelFormats() {
    QFETCH(QString, file);
    QFETCH(QStringList, encoding);
    QTemporaryDir dir;
    const std::string source = pathIn(dir, QStringLiteral("source.mp4"));
    writeNumberedVideo(source, 24, 25);
    const std::string path = pathIn(dir, file);
    QVERIFY(runFfmpeg(QStringList{"-i", QString::fromStdString(source)} + encoding +
                      QStringList{dir.filePath(file)}));
    sapiens::VideoFileSource video(path);
    QCOMPARE(video.info().width, kWidth);
    QCOMPARE(video.info().height, kHeight);
    QVERIFY(std::abs(video.info().fps - 25) < 0.01);
    const ReadResult read = readAll(video);
    QVERIFY2(read.error.isEmpty(), qPrintable(read.error));
    QCOMPARE(read.frames.size(), std::size_t{24});
    QString why;
    QVERIFY2(framesInOrder(read.frames, why), qPrintable(why));
    for (int i = 0; i < 24; ++i) QVERIFY(std::abs(read.frames[i].timestampSeconds - i / 25.0) < 1e-3);
    // White stays white and black stays black through every conversion (range and matrix handled).
    const cv::Vec3b white = read.frames[0].bgr.at<cv::Vec3b>(kHeight * 9 / 10, kWidth / 8);  // check row: 1s
    for (int c = 0; c < 3; ++c) QVERIFY2(white[c] > 235, qPrintable(QString::number(white[c])));
  }

  void appliesRotationMetadata_data() {
    QTest::addColumn<int>("rotate");
    QTest::newRow("90") << 90;
    QTest::newRow("180") << 180;
    QTest::newRow("270") << 270;
  }

  // Frames come out as ffmpeg's own auto-rotation shows them.
  void appliesRotationMetadata() {
    QFETCH(int, rotate);
    QTemporaryDir dir;
    const std::string plain = pathIn(dir, QStringLiteral("plain.mp4"));
    writeNumberedVideo(plain, 10, 30);
    const std::string rotated = pathIn(dir, QStringLiteral("rotated.mp4"));
    QVERIFY(runFfmpeg({"-i", QString::fromStdString(plain), "-c", "copy", "-metadata:s:v:0",
                       QStringLiteral("rotate=%1").arg(rotate), QString::fromStdString(rotated)}));
    const std::string reference = pathIn(dir, QStringLiteral("reference.png"));
    QVERIFY(runFfmpeg(
        {"-i", QString::fromStdString(rotated), "-frames:v", "1", QString::fromStdString(reference)}));
    const cv::Mat expected = sapiens::readImageBgr(reference);

    sapiens::VideoFileSource source(rotated);
    QVERIFY(source.info().rotationDegrees != 0);
    const bool quarter = source.info().rotationDegrees % 180 != 0;
    QCOMPARE(quarter, rotate != 180);
    QCOMPARE(source.info().width, quarter ? kHeight : kWidth);
    QCOMPARE(source.info().height, quarter ? kWidth : kHeight);
    auto frame = source.next();
    QVERIFY(frame.has_value());
    QCOMPARE(frame->bgr.cols, expected.cols);
    QCOMPARE(frame->bgr.rows, expected.rows);
    cv::Mat difference;
    cv::absdiff(frame->bgr, expected, difference);
    QVERIFY2(cv::mean(difference)[0] < 4, qPrintable(QString::number(cv::mean(difference)[0])));
    // Turned back by the reported rotation, the picture is the one that was written.
    cv::Mat upright;
    const int degrees = source.info().rotationDegrees;
    cv::rotate(frame->bgr, upright,
               degrees == 90    ? cv::ROTATE_90_COUNTERCLOCKWISE
               : degrees == 180 ? cv::ROTATE_180
                                : cv::ROTATE_90_CLOCKWISE);
    QCOMPARE(sapiens::readFrameNumber(upright).value_or(-1), std::int64_t{0});
    // Seeking hands out rotated frames too.
    source.seek(7);
    frame = source.next();
    cv::rotate(frame->bgr, upright,
               degrees == 90    ? cv::ROTATE_90_COUNTERCLOCKWISE
               : degrees == 180 ? cv::ROTATE_180
                                : cv::ROTATE_90_CLOCKWISE);
    QCOMPARE(sapiens::readFrameNumber(upright).value_or(-1), std::int64_t{7});
  }

  void damagedVideoEndsWithAClearError_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QString>("damage");
    QTest::newRow("mp4 cut in half") << QStringLiteral("cut.mp4") << QStringLiteral("cut");
    QTest::newRow("mkv cut in half") << QStringLiteral("cut.mkv") << QStringLiteral("cut");
    QTest::newRow("mp4 second half garbage") << QStringLiteral("garbage.mp4") << QStringLiteral("garbage");
  }

  // The frames before the damage come out intact and in order, then a MediaError names the file and
  // the frame reached. Never a hang or a crash.
  void damagedVideoEndsWithAClearError() {
    QFETCH(QString, file);
    QFETCH(QString, damage);
    QTemporaryDir dir;
    const std::string source = pathIn(dir, QStringLiteral("source.mp4"));
    {  // noise on the blocks makes the frames, not the index at the front, most of the file
      sapiens::VideoWriterOptions options = smallVideo();
      options.fps = 30;
      options.keyframeInterval = 10;
      sapiens::VideoWriter writer(source, options);
      cv::Mat noise(kHeight, kWidth, CV_8UC3);
      for (int i = 0; i < 60; ++i) {
        cv::randu(noise, 0, 40);
        cv::Mat picture = sapiens::frameNumberPicture(kWidth, kHeight, i);
        cv::add(picture, noise, picture);
        cv::subtract(picture, cv::Scalar(20, 20, 20), picture);
        writer.write(picture, i / 30.0);
      }
      writer.finish();
    }
    const std::string path = pathIn(dir, file);
    if (file.endsWith(QLatin1String(".mkv")))
      QVERIFY(runFfmpeg({"-i", QString::fromStdString(source), "-c:v", "libvpx-vp9", "-deadline", "realtime",
                         "-cpu-used", "8", "-b:v", "0", "-crf", "20", QString::fromStdString(path)}));
    else
      QVERIFY(QFile::copy(QString::fromStdString(source), QString::fromStdString(path)));
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::ReadWrite));
    const qint64 size = f.size();
    if (damage == QLatin1String("cut")) {
      QVERIFY(f.resize(size / 2));
    } else {
      QByteArray noise(static_cast<int>(size - size / 2), 0);
      QRandomGenerator generator(7);
      for (char& c : noise) c = static_cast<char>(generator.bounded(256));
      f.seek(size / 2);
      f.write(noise);
    }
    f.close();

    sapiens::VideoFileSource video(path);
    const ReadResult read = readAll(video);
    QVERIFY2(!read.error.isEmpty(),
             qPrintable(QStringLiteral("no error after %1 frames").arg(read.frames.size())));
    QCOMPARE(read.errorPath, path);
    QVERIFY2(read.frames.size() >= 3 && read.frames.size() < 60,
             qPrintable(QStringLiteral("%1 frames, %2").arg(read.frames.size()).arg(read.error)));
    QString why;
    QVERIFY2(framesInOrder(read.frames, why), qPrintable(why));
    QVERIFY2(read.error.contains(QStringLiteral("frame %1").arg(read.frames.size())), qPrintable(read.error));
    QVERIFY2(read.error.contains(file), qPrintable(read.error));
    // Pulling again repeats the error instead of crashing or handing out garbage.
    QCOMPARE(mediaError([&] { video.next(); }), read.error);
  }

  void refusesFilesThatAreNotVideos() {
    QTemporaryDir dir;
    auto openError = [](const std::string& path) {
      return mediaError([&] { sapiens::VideoFileSource s(path); });
    };
    QVERIFY(openError(pathIn(dir, QStringLiteral("missing.mp4")))
                .contains(QStringLiteral("missing.mp4: no such file")));
    QVERIFY(openError(dir.path().toStdString()).contains(QStringLiteral("folder")));
    const std::string garbage = pathIn(dir, QStringLiteral("garbage.mp4"));
    QFile g(QString::fromStdString(garbage));
    QVERIFY(g.open(QIODevice::WriteOnly));
    QRandomGenerator generator(3);
    for (int i = 0; i < 5000; ++i) g.putChar(static_cast<char>(generator.bounded(256)));
    g.close();
    QVERIFY(openError(garbage).contains(QStringLiteral("garbage.mp4: not a readable video file")));
    const std::string audio = pathIn(dir, QStringLiteral("tone.m4a"));
    QVERIFY(runFfmpeg({"-f", "lavfi", "-i", "sine=duration=0.2", QString::fromStdString(audio)}));
    QVERIFY2(openError(audio).contains(QStringLiteral("tone.m4a: has no video stream")),
             qPrintable(openError(audio)));
  }

  // The parts of a video written for consecutive frame ranges join into one by copying packets: every
  // frame, in order, at its own time; parts that overlap or differ in encoding are refused, naming them.
  void consecutivePartsJoinIntoOneVideo() {
    QTemporaryDir dir;
    const double fps = 30;
    const auto at = [fps](int i) { return i / fps; };
    std::vector<std::string> parts;
    for (int p = 0; p < 3; ++p) {
      parts.push_back(pathIn(dir, QStringLiteral("part%1.mp4").arg(p)));
      sapiens::VideoWriterOptions options = smallVideo();
      options.fps = fps;
      sapiens::VideoWriter writer(parts.back(), options);
      for (int i = p * 5; i < p * 5 + 5; ++i)
        writer.write(sapiens::frameNumberPicture(kWidth, kHeight, i), at(i));
      writer.finish();
    }
    const std::string joined = pathIn(dir, QStringLiteral("joined.mp4"));
    QCOMPARE(sapiens::concatenateVideos(parts, joined), std::int64_t{15});
    sapiens::VideoFileSource video(joined);
    int count = 0;
    while (auto frame = video.next()) {
      QCOMPARE(sapiens::readFrameNumber(frame->bgr).value_or(-1), std::int64_t{count});
      QVERIFY2(
          std::abs(frame->timestampSeconds - at(count)) < 1e-6,
          qPrintable(QStringLiteral("frame %1 at %2 s").arg(count).arg(frame->timestampSeconds, 0, 'f', 6)));
      ++count;
    }
    QCOMPARE(count, 15);

    const std::string again = pathIn(dir, QStringLiteral("again.mp4"));
    QVERIFY(mediaError([&] {
              sapiens::concatenateVideos({parts[1], parts[0]}, again);
            }).contains(QString::fromStdString(parts[0] + ": starts before the previous part ends")));
    const std::string bigger = pathIn(dir, QStringLiteral("bigger.mp4"));
    writeNumberedVideo(
        bigger, 2, [](int i) { return 10 + i / 30.0; },
        [] {
          sapiens::VideoWriterOptions o;
          o.width = 2 * kWidth;
          o.height = kHeight;
          return o;
        }());
    QVERIFY(mediaError([&] {
              sapiens::concatenateVideos({parts[0], bigger}, again);
            }).contains(QString::fromStdString(bigger + ": is encoded differently")));
    QVERIFY(!QFile::exists(QString::fromStdString(again)));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).filter(QStringLiteral(".again")).size(),
             0);
  }

  void writerIsAtomic() {
    QTemporaryDir dir;
    const std::string path = pathIn(dir, QStringLiteral("out.mp4"));
    auto entries = [&dir] { return QDir(dir.path()).entryList(QDir::Files | QDir::Hidden); };
    {
      sapiens::VideoWriter writer(path, smallVideo());
      writer.write(sapiens::frameNumberPicture(kWidth, kHeight, 0), 0);
      QVERIFY(!QFile::exists(QString::fromStdString(path)));  // only a temporary file so far
      QCOMPARE(entries().size(), 1);
    }  // cancelled: no finish()
    QVERIFY(entries().isEmpty());

    writeNumberedVideo(path, 5, 25);
    const QByteArray finished = [&] {
      QFile f(QString::fromStdString(path));
      f.open(QIODevice::ReadOnly);
      return f.readAll();
    }();
    QCOMPARE(entries(), QStringList{QStringLiteral("out.mp4")});
    {  // a cancelled rewrite leaves the previous file as it was
      sapiens::VideoWriter writer(path, smallVideo());
      for (int i = 0; i < 3; ++i) writer.write(sapiens::frameNumberPicture(kWidth, kHeight, 9), i / 25.0);
    }
    QFile f(QString::fromStdString(path));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), finished);
    QCOMPARE(entries(), QStringList{QStringLiteral("out.mp4")});
  }

  void writerReportsAFullDisk() {
    QTemporaryDir dir;
    const std::string path = pathIn(dir, QStringLiteral("full.mp4"));
    QString error;
    {
      sapiens::test::FileSizeLimit limit(16 * 1024);
      error = mediaError([&] {
        sapiens::VideoWriterOptions options;
        options.width = 160;
        options.height = 120;
        options.quality = 0;  // lossless noise: large packets
        sapiens::VideoWriter writer(path, options);
        cv::Mat noise(120, 160, CV_8UC3);
        for (int i = 0; i < 60; ++i) {
          cv::randu(noise, 0, 256);
          writer.write(noise, i / 25.0);
        }
        writer.finish();
      });
    }
    QVERIFY2(error.contains(QStringLiteral("full.mp4")), qPrintable(error));
    QVERIFY(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).isEmpty());
  }

  void writerRefusesBadInput() {
    QTemporaryDir dir;
    QVERIFY(mediaError([&] {
              sapiens::VideoWriter w(pathIn(dir, QStringLiteral("x.unknownext")), smallVideo());
            }).contains(QStringLiteral("x.unknownext")));
    QVERIFY(mediaError([&] {
              sapiens::VideoWriter w(pathIn(dir, QStringLiteral("nowhere/x.mp4")), smallVideo());
            }).contains(QStringLiteral("nowhere/x.mp4")));
    sapiens::VideoWriter writer(pathIn(dir, QStringLiteral("bad.mp4")), smallVideo());
    QVERIFY(
        mediaError([&] { writer.write(cv::Mat(10, 10, CV_8UC3), 0); }).contains(QStringLiteral("not 96x80")));
    writer.write(sapiens::frameNumberPicture(kWidth, kHeight, 0), 0.5);
    QVERIFY(mediaError([&] {
              writer.write(sapiens::frameNumberPicture(kWidth, kHeight, 1), 0.5);
            }).contains(QStringLiteral("does not come after")));
  }

  void writerPadsOddSizes() {
    QTemporaryDir dir;
    const std::string path = pathIn(dir, QStringLiteral("odd.mp4"));
    sapiens::VideoWriterOptions options;
    options.width = 97;
    options.height = 81;
    writeNumberedVideo(
        path, 4, [](int i) { return i / 25.0; }, options);
    sapiens::VideoFileSource source(path);
    QCOMPARE(source.info().width, 98);
    QCOMPARE(source.info().height, 82);
    const auto frame = source.next();
    QVERIFY(frame.has_value());
    QCOMPARE(sapiens::readFrameNumber(frame->bgr(cv::Rect(0, 0, 97, 81))).value_or(-1), std::int64_t{0});
  }
};

QTEST_APPLESS_MAIN(TestVideoIo)
#include "test_video_io.moc"
