// A forward pass stops between the backbone's layers once its thread's interrupt flag is set (what lets
// the studio close without waiting for a long pass): at once when set before, part-way when set from
// another thread during the pass, and not at all when clear. A video run, whose passes run on the frame
// pipeline's analyser thread, stops on the flag of the thread that asked for it, as cancelled.

#include "sapiens/media/frame_number_pattern.h"
#include "sapiens/media/video_writer.h"
#include "sapiens/model/forward_interrupt.h"
#include "sapiens/model/model.h"
#include "sapiens/run/video_run.h"
#include "test_support.h"

#include <ATen/ATen.h>

#include <QtTest>

#include <QTemporaryDir>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

using namespace sapiens;

namespace {

// A 40-frame video through the seg fixture at a small input (a fraction of a second a frame here).
VideoRunOptions fortyFrameSegRun(const QTemporaryDir& dir) {
  const std::string video = dir.filePath(QStringLiteral("forty.mp4")).toStdString();
  VideoWriterOptions writerOptions;
  writerOptions.width = 160;
  writerOptions.height = 120;
  writerOptions.fps = 10;
  VideoWriter writer(video, writerOptions);
  for (int i = 0; i < 40; ++i) writer.write(frameNumberPicture(160, 120, i), i / 10.0);
  writer.finish();
  VideoRunOptions options;
  options.input = video;
  options.outputDir = dir.filePath(QStringLiteral("out")).toStdString();
  options.perFrameFiles = false;
  options.models.tasks = {Task::Seg};
  options.models.modelPaths[Task::Seg] = test::fixture("golden/seg/model.safetensors");
  options.models.inputSize = InputSize{192, 256};
  return options;
}

}  // namespace

class TestForwardInterrupt : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void aSetFlagStopsThePassAndAClearOneDoesNot() {
    const Model model = Model::load(test::fixture("golden/seg/model.safetensors"), {});
    const at::Tensor input = at::rand({1, 3, 128, 96});
    std::atomic<bool> flag{false};
    setForwardInterruptFlag(&flag);
    QVERIFY(model.forward(input).get("seg_logits").defined());
    flag = true;
    QVERIFY_THROWS_EXCEPTION(ForwardInterrupted, model.forward(input));
    setForwardInterruptFlag(nullptr);
    QVERIFY(model.forward(input).get("seg_logits").defined());  // no flag: nothing to stop it
  }

  void aFlagSetFromAnotherThreadEndsALongPassEarly() {
    const Model model = Model::load(test::fixture("golden/seg/model.safetensors"), {});
    const at::Tensor input = at::rand({2, 3, 1024, 768});  // a pass of seconds here
    std::atomic<bool> flag{false};
    setForwardInterruptFlag(&flag);
    const auto start = std::chrono::steady_clock::now();
    model.forward(input);
    const double whole = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    std::thread closer([&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(whole / 4));
      flag = true;
    });
    const auto again = std::chrono::steady_clock::now();
    bool interrupted = false;
    try {
      model.forward(input);
    } catch (const ForwardInterrupted&) {
      interrupted = true;
    }
    const double part = std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count();
    closer.join();
    setForwardInterruptFlag(nullptr);
    QVERIFY(interrupted);
    qInfo("whole pass %.2f s, interrupted after %.2f s", whole, part);
    QVERIFY2(part < 0.8 * whole, qPrintable(QString("%1 s of %2 s").arg(part).arg(whole)));
  }

  // Set before the run: no frame is analysed, and the run ends as cancelled, not failed.
  void aVideoRunStopsOnItsCallersFlag() {
    QTemporaryDir dir;
    const VideoRunOptions options = fortyFrameSegRun(dir);
    std::atomic<bool> flag{true};
    setForwardInterruptFlag(&flag);
    const VideoRunSummary summary = runVideo(options);
    setForwardInterruptFlag(nullptr);
    QCOMPARE(summary.stats.processed, std::int64_t(0));
    QVERIFY(summary.stats.cancelled);
    QVERIFY2(summary.stats.error.empty(), summary.stats.error.c_str());
    QVERIFY(summary.frameProblems.empty());  // no task failed on a frame either
  }

  // Set part-way from another thread (here the sink's, after the second frame), as quitting does: the
  // run stops within the frames already analysed (at most the queue of 4 and the one at hand).
  void aVideoRunStopsPartWayWhenItsFlagIsSet() {
    QTemporaryDir dir;
    const VideoRunOptions options = fortyFrameSegRun(dir);
    std::atomic<bool> flag{false};
    setForwardInterruptFlag(&flag);
    VideoRunCallbacks callbacks;
    callbacks.onProgress = [&flag](const VideoRunProgress& progress) {
      if (progress.stats.processed == 2) flag = true;
    };
    const VideoRunSummary summary = runVideo(options, callbacks);
    setForwardInterruptFlag(nullptr);
    qInfo("%lld of 40 frames written", static_cast<long long>(summary.stats.processed));
    QVERIFY(summary.stats.processed >= 2 && summary.stats.processed <= 8);
    QVERIFY(summary.stats.cancelled);
    QVERIFY2(summary.stats.error.empty(), summary.stats.error.c_str());
    QVERIFY(summary.frameProblems.empty());
    QVERIFY(!summary.annotatedVideo.empty());  // what was done before the stop is written
  }
};

QTEST_GUILESS_MAIN(TestForwardInterrupt)
#include "test_forward_interrupt.moc"
