// The streaming pipeline with real parts: videos this test encodes (frame numbers drawn into the
// pixels), the synthetic camera, and the tiny fixture segmentation model.

#include "sapiens/media/frame_number_pattern.h"
#include "sapiens/media/synthetic_live_source.h"
#include "sapiens/media/video_file_source.h"
#include "sapiens/media/video_writer.h"
#include "sapiens/model/model.h"
#include "sapiens/model/model_error.h"
#include "sapiens/pipeline/frame_pipeline.h"
#include "sapiens/pipeline/run_failure.h"
#include "sapiens/pipeline/temporal_smoothing.h"
#include "test_support.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <opencv2/core.hpp>

#include <ATen/ATen.h>

#include <atomic>
#include <filesystem>
#include <random>

namespace {

constexpr int kWidth = 96, kHeight = 64;

std::string writeNumberedVideo(const QTemporaryDir& dir, int frames, const char* extension = "mp4") {
  constexpr double fps = 25;
  const std::string path = (dir.path() + "/numbered." + extension).toStdString();
  sapiens::VideoWriterOptions options;
  options.width = kWidth;
  options.height = kHeight;
  options.fps = fps;
  options.keyframeInterval = 8;
  sapiens::VideoWriter writer(path, options);
  for (int i = 0; i < frames; ++i) writer.write(sapiens::frameNumberPicture(kWidth, kHeight, i), i / fps);
  writer.finish();
  return path;
}

sapiens::Model segModel() {
  sapiens::ModelOptions options;
  options.device = "cpu";
  return sapiens::Model::load(sapiens::test::fixture("golden/seg/model.safetensors"), options);
}

struct Collected {
  std::vector<std::int64_t> indices;       // Frame::index as delivered
  std::vector<std::int64_t> pixelNumbers;  // the number read back from the picture
  std::vector<double> timestamps;
  bool everyFrameHasLabels = true;
};

sapiens::FramePipelineCallbacks collectInto(Collected& c) {
  sapiens::FramePipelineCallbacks callbacks;
  callbacks.sink = [&c](sapiens::ProcessedFrame& p) {
    c.indices.push_back(p.frame.index);
    c.pixelNumbers.push_back(sapiens::readFrameNumber(p.frame.bgr).value_or(-1));
    c.timestamps.push_back(p.frame.timestampSeconds);
    c.everyFrameHasLabels = c.everyFrameHasLabels && p.result.segLabels.rows == p.frame.bgr.rows &&
                            p.result.segLabels.cols == p.frame.bgr.cols;
  };
  return callbacks;
}

}  // namespace

class FramePipelineTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() { model_ = std::make_unique<sapiens::Model>(segModel()); }

  void everyFrameOfAFileInOrder_data() {
    QTest::addColumn<int>("batch");
    QTest::newRow("one at a time") << 1;
    QTest::newRow("batches of 4") << 4;
  }
  void everyFrameOfAFileInOrder() {
    QFETCH(int, batch);
    QTemporaryDir dir;
    const std::string path = writeNumberedVideo(dir, 18);
    sapiens::VideoFileSource source(path);
    sapiens::FramePipelineOptions options;
    options.models = {{model_.get(), {64, 48}}};
    options.batchSize = static_cast<std::size_t>(batch);
    options.queueCapacity = 2;  // the decoder is much faster: it must wait, not skip
    Collected c;
    const auto stats = sapiens::runFramePipeline(source, options, collectInto(c));
    QVERIFY2(stats.error.empty(), stats.error.c_str());
    QCOMPARE(stats.processed, 18);
    QCOMPARE(stats.dropped, 0);
    QVERIFY(c.everyFrameHasLabels);
    for (int i = 0; i < 18; ++i) {
      QCOMPARE(c.indices[i], i);
      QCOMPARE(c.pixelNumbers[i], i);
      QVERIFY(std::abs(c.timestamps[i] - i / 25.0) < 1e-6);
    }
  }

  void frameSelectionPicksTheRange() {
    QTemporaryDir dir;
    const std::string path = writeNumberedVideo(dir, 30);
    sapiens::VideoFileSource source(path);
    sapiens::FramePipelineOptions options;
    options.models = {{model_.get(), {64, 48}}};
    options.selection = {11, 25, 3, 4};  // 11, 14, 17, 20 (then the limit)
    Collected c;
    const auto stats = sapiens::runFramePipeline(source, options, collectInto(c));
    QVERIFY2(stats.error.empty(), stats.error.c_str());
    QCOMPARE(c.pixelNumbers, (std::vector<std::int64_t>{11, 14, 17, 20}));
  }

  void aTruncatedVideoEndsWithAnErrorAfterItsGoodFrames() {
    QTemporaryDir dir;
    const std::string path = writeNumberedVideo(dir, 40, "mkv");  // Matroska plays without its index
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
    sapiens::VideoFileSource source(path);
    sapiens::FramePipelineOptions options;
    options.models = {{model_.get(), {64, 48}}};
    Collected c;
    const auto stats = sapiens::runFramePipeline(source, options, collectInto(c));
    QCOMPARE(stats.failedStage, std::string("decode"));
    QVERIFY2(stats.error.find("numbered.mkv") != std::string::npos, stats.error.c_str());
    QVERIFY(stats.processed > 0 && stats.processed < 40);
    // Every frame delivered is whole and in order. Near the cut a B-frame whose packet was lost is
    // missing, and the source (counting the frames the file holds) numbers the frames after it one lower.
    const std::size_t n = c.pixelNumbers.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (i + 3 < n) QCOMPARE(c.pixelNumbers[i], c.indices[i]);
      if (i > 0) QVERIFY(c.pixelNumbers[i] > c.pixelNumbers[i - 1] && c.indices[i] > c.indices[i - 1]);
    }
    QCOMPARE(c.indices.front(), std::int64_t{0});
  }

  void aLiveSourceDropsFramesAndKeepsLatencyBounded() {
    sapiens::SyntheticLiveOptions live;
    live.width = 160;
    live.height = 120;
    live.fps = 100;
    live.frameLimit = 150;  // 1.5 s of camera time
    sapiens::SyntheticLiveSource source(live);
    sapiens::FramePipelineOptions options;
    options.models = {{model_.get(), {256, 192}}};  // far slower than 10 ms per frame here
    Collected c;
    double slowestAnalysis = 0;
    auto callbacks = collectInto(c);
    const auto stats = sapiens::runFramePipeline(source, options, callbacks);
    slowestAnalysis = stats.analyseBusySeconds / std::max<std::int64_t>(1, stats.processed);
    QVERIFY2(stats.error.empty(), stats.error.c_str());
    QVERIFY(stats.processed >= 2);
    QVERIFY2(stats.dropped > 0, "a slow model on a 100 fps camera must drop frames");
    QCOMPARE(stats.processed + stats.dropped, std::int64_t(c.indices.back() + 1));
    for (std::size_t i = 1; i < c.indices.size(); ++i) QVERIFY(c.indices[i] > c.indices[i - 1]);
    for (std::size_t i = 0; i < c.indices.size(); ++i) QCOMPARE(c.pixelNumbers[i], c.indices[i]);
    // Latest-frame-wins: a frame waits at most for the analysis in progress, then its own.
    QVERIFY2(stats.maxLatencyMs < 1000.0 * (2.5 * slowestAnalysis) + 250.0,
             qPrintable(QString("max latency %1 ms, analysis %2 ms per frame")
                            .arg(stats.maxLatencyMs)
                            .arg(1000 * slowestAnalysis)));
  }

  void cancelStopsSoon() {
    QTemporaryDir dir;
    const std::string path = writeNumberedVideo(dir, 60);
    sapiens::VideoFileSource source(path);
    sapiens::FramePipelineOptions options;
    options.models = {{model_.get(), {64, 48}}};
    Collected c;
    auto callbacks = collectInto(c);
    std::atomic<int> delivered{0};
    callbacks.onProgress = [&delivered](const sapiens::FramePipelineStats& s) {
      delivered = int(s.processed);
    };
    callbacks.isCancelled = [&delivered] { return delivered >= 3; };
    const auto stats = sapiens::runFramePipeline(source, options, callbacks);
    QVERIFY(stats.cancelled);
    QVERIFY(stats.processed >= 3 && stats.processed < 60);
  }

  void aFailingStageStopsTheOthers() {
    QTemporaryDir dir;
    const std::string path = writeNumberedVideo(dir, 30);
    sapiens::VideoFileSource source(path);
    sapiens::FramePipelineOptions options;
    options.models = {{model_.get(), {64, 48}}};
    auto callbacks = sapiens::FramePipelineCallbacks{};
    int seen = 0;
    callbacks.sink = [&seen](sapiens::ProcessedFrame&) {
      if (++seen == 5) throw std::runtime_error("disk full while writing frame 4");
    };
    const auto stats = sapiens::runFramePipeline(source, options, callbacks);
    QCOMPARE(stats.failedStage, std::string("sink"));
    QVERIFY(stats.error.find("disk full") != std::string::npos);
    QCOMPARE(stats.processed, 4);

    sapiens::ModelOptions backboneOptions;
    const sapiens::Model backbone =
        sapiens::Model::load(sapiens::test::fixture("golden/backbone/model.safetensors"), backboneOptions);
    sapiens::VideoFileSource again(path);
    options.models = {{&backbone, {64, 48}}};
    const auto failed = sapiens::runFramePipeline(again, options, {});
    QCOMPARE(failed.failedStage, std::string("analyse"));
    QVERIFY2(failed.error.find("backbone") != std::string::npos, failed.error.c_str());
  }

  // Front ends say "not enough memory" in their own terms for whichever library ran out, and show one line.
  void aFailureIsClassifiedWhicheverLibraryThrewIt() {
    const auto oom = [](const std::exception& e) { return sapiens::classifyFailure(e).outOfMemory; };
    QVERIFY(oom(sapiens::ModelOutOfMemoryError("out of host memory in the forward pass", false)));
    QVERIFY(oom(std::bad_alloc()));
    QVERIFY(oom(cv::Exception(cv::Error::StsNoMem, "Failed to allocate 9 bytes", "f", "file.cpp", 1)));
    QVERIFY(!oom(cv::Exception(cv::Error::StsBadArg, "bad argument", "f", "file.cpp", 1)));
    QVERIFY(!oom(std::runtime_error("cannot open 'a.png'")));
    try {
      // 4 TiB: LibTorch's CPU allocator refuses it (unless the kernel overcommits without limit).
      (void)at::empty({std::int64_t(1) << 40}, at::kFloat);
    } catch (const std::exception& e) {
      const sapiens::RunFailure failure = sapiens::classifyFailure(e);
      QVERIFY2(failure.outOfMemory, qPrintable(QString::fromStdString(failure.message)));
      QVERIFY2(failure.message.find('\n') == std::string::npos, failure.message.c_str());
    }
    const sapiens::RunFailure twoLines = sapiens::classifyFailure(std::runtime_error("first\nsecond"));
    QCOMPARE(twoLines.message, std::string("first"));
    QVERIFY(!twoLines.outOfMemory);
  }

  void oneEuroSmoothsNoiseAndFollowsMotion() {
    sapiens::OneEuroFilter filter;
    std::mt19937 rng(7);
    std::normal_distribution<double> noise(0.0, 2.0);
    double rawJitter = 0, smoothJitter = 0, previousRaw = 100, previousSmooth = 100;
    for (int i = 0; i < 120; ++i) {
      const double raw = 100 + noise(rng);
      const double smooth = filter.filter(raw, i / 30.0);
      if (i > 0) rawJitter += std::abs(raw - previousRaw), smoothJitter += std::abs(smooth - previousSmooth);
      previousRaw = raw, previousSmooth = smooth;
    }
    QVERIFY2(smoothJitter < 0.5 * rawJitter,
             qPrintable(QString("%1 vs %2").arg(smoothJitter).arg(rawJitter)));
    double value = 0;
    for (int i = 120; i < 150; ++i) value = filter.filter(300, i / 30.0);  // a jump: it must catch up
    QVERIFY2(std::abs(value - 300) < 5, qPrintable(QString::number(value)));
  }

  void mapSmoothingRemovesFlickerButNotEdges() {
    std::mt19937 rng(3);
    std::normal_distribution<float> noise(0.0f, 0.01f);
    sapiens::TemporalSmoother smoother;
    cv::Mat previousRaw, previousSmooth;
    double raw = 0, smooth = 0;
    for (int i = 0; i < 20; ++i) {
      sapiens::FrameResult frame;
      frame.pointmap = cv::Mat(32, 32, CV_32FC3, cv::Scalar(0.1, 0.2, 2.0));
      for (auto it = frame.pointmap.begin<cv::Vec3f>(); it != frame.pointmap.end<cv::Vec3f>(); ++it)
        (*it)[2] += noise(rng);
      const cv::Mat rawCopy = frame.pointmap.clone();
      smoother.apply(frame, i / 30.0);
      if (i > 0) {
        raw += sapiens::frameToFrameChange(previousRaw, rawCopy);
        smooth += sapiens::frameToFrameChange(previousSmooth, frame.pointmap);
      }
      previousRaw = rawCopy, previousSmooth = frame.pointmap.clone();
    }
    QVERIFY2(smooth < 0.6 * raw, qPrintable(QString("%1 vs %2").arg(smooth).arg(raw)));
    sapiens::FrameResult moved;
    moved.pointmap = cv::Mat(32, 32, CV_32FC3, cv::Scalar(0.1, 0.2, 3.0));  // the person stepped back
    smoother.apply(moved, 1.0);
    QCOMPARE(moved.pointmap.at<cv::Vec3f>(5, 5)[2], 3.0f);
  }

  // The alpha matte of a video: flicker smoothed, a moved edge taken at once (no ghost).
  void alphaSmoothingRemovesFlickerButNotEdges() {
    std::mt19937 rng(5);
    std::normal_distribution<float> noise(0.0f, 0.02f);
    sapiens::TemporalSmoother smoother;
    cv::Mat previousRaw, previousSmooth;
    double raw = 0, smooth = 0;
    for (int i = 0; i < 20; ++i) {
      sapiens::FrameResult frame;
      frame.alpha = cv::Mat(32, 32, CV_32FC1, cv::Scalar(0.5));
      for (auto it = frame.alpha.begin<float>(); it != frame.alpha.end<float>(); ++it) *it += noise(rng);
      const cv::Mat rawCopy = frame.alpha.clone();
      smoother.apply(frame, i / 30.0);
      if (i > 0) {
        raw += cv::norm(rawCopy, previousRaw, cv::NORM_L1);
        smooth += cv::norm(frame.alpha, previousSmooth, cv::NORM_L1);
      }
      previousRaw = rawCopy, previousSmooth = frame.alpha.clone();
    }
    QVERIFY2(smooth < 0.6 * raw, qPrintable(QString("%1 vs %2").arg(smooth).arg(raw)));
    sapiens::FrameResult moved;
    moved.alpha = cv::Mat(32, 32, CV_32FC1, cv::Scalar(1.0));  // the person now covers these pixels
    smoother.apply(moved, 1.0);
    QCOMPARE(moved.alpha.at<float>(5, 5), 1.0f);
  }

 private:
  std::unique_ptr<sapiens::Model> model_;
};

QTEST_APPLESS_MAIN(FramePipelineTest)
#include "test_frame_pipeline.moc"
