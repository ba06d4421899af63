// finetune/FineTuner on label sets the test makes from the bundled sample, with the tiny fixture models
// at a small input size: the loss falls, the metric rises, the saved model reloads and reproduces the
// trained predictions exactly, pause/stop/continue, snapshots, the feature cache.

#include "pipeline/image_inference.h"
#include "sapiens/export/exr.h"
#include "sapiens/export/npy.h"
#include "sapiens/finetune/fine_tuner.h"
#include "sapiens/finetune/finetuned_model_file.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"
#include "sapiens/media/image_io.h"
#include "sapiens/model/model.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <thread>

using namespace sapiens;

namespace {

constexpr InputSize kInput{96, 128};  // W x H: an 8 x 6 token grid with the fixture backbone

std::string goldenModel(const std::string& task) {
  return test::fixture("golden/" + task + "/model.safetensors");
}

// Four frames of the input's own size made from the sample: the whole picture, two crops, a flip.
std::vector<cv::Mat> framesFromSample() {
  const cv::Mat sample = readImageBgr(test::resource("samples/astronaut.png"));
  const int w = sample.cols, h = sample.rows;
  std::vector<cv::Mat> frames;
  for (const cv::Rect& region :
       {cv::Rect(0, 0, w, h), cv::Rect(w / 8, 0, w * 3 / 4, h * 3 / 4),
        cv::Rect(w / 4, h / 4, w * 3 / 4, h * 3 / 4), cv::Rect(0, h / 6, w * 2 / 3, h * 5 / 6)}) {
    cv::Mat frame;
    cv::resize(sample(region), frame, cv::Size(kInput.width, kInput.height), 0, 0, cv::INTER_AREA);
    frames.push_back(frame);
  }
  cv::flip(frames[1], frames[3], 1);
  return frames;
}

// Seg labels by a rule the head can learn from patch features: each 16 x 16 block gets a class from its
// mean brightness (Background, Apparel, Face_Neck, Hair).
cv::Mat blockMask(const cv::Mat& bgr) {
  cv::Mat gray;
  cv::cvtColor(bgr, gray, cv::COLOR_BGR2GRAY);
  cv::Mat mask(bgr.size(), CV_8UC1);
  for (int y = 0; y < bgr.rows; y += 16) {
    for (int x = 0; x < bgr.cols; x += 16) {
      const cv::Rect block(x, y, std::min(16, bgr.cols - x), std::min(16, bgr.rows - y));
      const double mean = cv::mean(gray(block))[0];
      mask(block).setTo(mean < 70 ? 0 : mean < 120 ? 1 : mean < 170 ? 3 : 4);
    }
  }
  return mask;
}

LabelSet makeSegLabelSet(const std::string& folder, std::vector<LabelClass> classes = {}) {
  LabelSet labels;
  labels.folder = folder;
  labels.task = Task::Seg;
  labels.classes = std::move(classes);
  const std::vector<cv::Mat> frames = framesFromSample();
  for (std::size_t i = 0; i < frames.size(); ++i) {
    FrameLabels frame;
    frame.image = frames[i];
    frame.mask = blockMask(frames[i]);
    addFrame(labels, "frame" + std::to_string(i), frame, i == 3 ? FrameSplit::Validation : FrameSplit::Train);
  }
  return labels;
}

TrainingSettings quickSettings(int steps) {
  TrainingSettings settings;
  settings.steps = steps;
  settings.batchSize = 4;
  settings.learningRate = 3e-3;
  settings.inputSize = kInput;
  settings.evaluateEvery = 0;
  return settings;
}

// Saved heads reload in float32 to be compared with the tuner's own float32 predictions, also where
// --dtype auto would pick bf16 (the suite's bf16 run: SAPIENS_CPU_BF16=1).
ModelOptions float32() {
  ModelOptions options;
  options.dtype = at::kFloat;
  return options;
}

Model loadFp32(const std::string& task) {
  return Model::load(goldenModel(task), float32());
}

// Empty when training did its job: the loss fell to at most `lossFactor` of the first step's and the
// metric moved the right way by more than `margin`; otherwise what fell short, with the figures.
QString learningShortfall(const TrainingReport& r, double lossFactor, bool higherIsBetter, double margin) {
  const QString figures = QString("loss %1 -> %2, metric %3 -> %4")
                              .arg(r.firstLoss)
                              .arg(r.lastLoss)
                              .arg(r.trainingBefore.metric)
                              .arg(r.trainingAfter.metric);
  if (!std::isfinite(r.lastLoss) || r.lastLoss > lossFactor * r.firstLoss)
    return "the loss did not fall enough: " + figures;
  const double gain = higherIsBetter ? r.trainingAfter.metric - r.trainingBefore.metric
                                     : r.trainingBefore.metric - r.trainingAfter.metric;
  if (!(gain > margin)) return "the metric did not improve enough: " + figures;
  return {};
}

}  // namespace

class TestFinetuneTraining : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  // The suite runs these tests twice: as the other tests, in float32 (SAPIENS_CPU_BF16=0), and with
  // SAPIENS_CPU_BF16=1, where auto trains in bf16 mixed precision, on a CPU with native bf16.
  void initTestCase() {
    const QString unsupported = sapiens::test::forcedBf16Unsupported();
    if (!unsupported.isEmpty()) QSKIP(qPrintable(unsupported));
  }

  // bf16 mixed precision asked for: the steps run under autocast, the loss still falls, and the head's
  // weights stay float32 (they are what the optimiser updates and what is saved); fp32 asked for trains
  // in float32; there is no fp16 training.
  void mixedPrecisionTrainsFloat32Weights() {
    QTemporaryDir dir;
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString());
    TrainingSettings settings = quickSettings(60);
    settings.precision = TrainingPrecision::BFloat16;
    FineTuner tuner(loadFp32("seg"), labels, settings);
    QVERIFY(tuner.precision() == TrainingPrecision::BFloat16);
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    const TrainingReport report = tuner.train(control);
    QVERIFY2(report.lastLoss < 0.7 * report.firstLoss,
             qPrintable(QString("loss %1 -> %2").arg(report.firstLoss).arg(report.lastLoss)));
    for (const auto& [name, tensor] : tuner.model().headParameters())
      QVERIFY2(tensor.scalar_type() == at::kFloat, name.c_str());

    settings.precision = TrainingPrecision::Float32;
    QVERIFY(FineTuner(loadFp32("seg"), labels, settings).precision() == TrainingPrecision::Float32);
    QVERIFY(!parseTrainingPrecision("fp16"));
  }

  void segLossHalvesMetricRisesAndTheSavedModelReproducesIt() {
    QTemporaryDir dir;
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString());
    FineTuner tuner(loadFp32("seg"), labels, quickSettings(150));
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    QCOMPARE(tuner.samples().size(),
             std::size_t(3 * 2 + 1));  // 3 training frames x (as is, flipped) + 1 validation
    int reports = 0;
    const TrainingReport report = tuner.train(control, [&](const TrainingProgress& p) {
      ++reports;
      QVERIFY(p.step >= 1 && p.step <= 150 && p.totalSteps == 150 && std::isfinite(p.trainLoss));
    });
    QCOMPARE(report.steps, 150);
    QCOMPARE(reports, 150);
    const QString segShortfall = learningShortfall(report, 0.5, true, 0.1);  // mIoU up by 0.1
    QVERIFY2(segShortfall.isEmpty(), qPrintable(segShortfall));
    QVERIFY(report.validationAfter && report.validationAfter->samples == 1);

    // The full model through the normal loading path, and the head file over its base checkpoint.
    const std::string full = dir.filePath("full.safetensors").toStdString();
    const std::string head = dir.filePath("head.safetensors").toStdString();
    tuner.save(full, true);
    tuner.save(head, false);
    const Model reloaded = Model::load(full, float32());
    const Model withHead = loadFinetunedModel(head, float32());
    for (std::size_t i = 0; i < tuner.samples().size(); ++i) {
      const at::Tensor trained = tuner.predict(i).get("seg_logits");
      const at::Tensor input = tuner.sampleInput(i);
      QVERIFY2(at::equal(reloaded.forward(input).get("seg_logits"), trained),
               qPrintable(QString("sample %1").arg(i)));
      QVERIFY(at::equal(withHead.forward(input).get("seg_logits"), trained));
    }
    // The preview's prediction is what the saved model gives on that picture in a plain run.
    for (std::size_t i = 0; i < tuner.samples().size(); ++i) {
      const cv::Mat picture = tuner.sampleImage(i);
      const FrameResult predicted = tuner.predictFrame(i);
      QCOMPARE(predicted.segLabels.size(), picture.size());
      const cv::Mat expected = segmentImage(reloaded, picture, kInput).labels;
      QCOMPARE(cv::countNonZero(predicted.segLabels != expected), 0);
    }
    // Not trivially equal: the checkpoint's own head predicts something else.
    QVERIFY(!at::equal(loadFp32("seg").forward(tuner.sampleInput(0)).get("seg_logits"),
                       tuner.predict(0).get("seg_logits")));

    const auto metadata = readModelMetadata(full);
    QCOMPARE(metadata.at("format"), std::string("sapiens2-finetune"));
    QCOMPARE(metadata.at("content"), std::string("full"));
    QCOMPARE(metadata.at("base_checkpoint"), goldenModel("seg"));
    QCOMPARE(metadata.at("step"), std::string("150"));
    const auto classes = nlohmann::json::parse(metadata.at("classes"));
    QCOMPARE(classes.size(), std::size_t(29));
    QCOMPARE(classes[4]["name"].get<std::string>(), std::string("Hair"));
    QVERIFY(nlohmann::json::parse(metadata.at("metrics")).contains("validation"));
    QCOMPARE(readModelMetadata(head).at("content"), std::string("head"));
  }

  void theRangeTestChoosesARateAndPutsTheHeadBack() {
    QTemporaryDir dir;
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString());
    TrainingSettings settings = quickSettings(30);
    settings.learningRate = 0;  // the default: auto
    FineTuner tuner(loadFp32("seg"), labels, settings);
    TrainingControl control;
    std::vector<double> tried;
    QVERIFY(
        tuner.prepare(control, {}, [&](std::size_t done, std::size_t total, const LearningRateTrial& trial) {
          QCOMPARE(done, tried.size() + 1);
          QCOMPARE(total, std::size_t(5));
          tried.push_back(trial.rate);
        }));
    QCOMPARE(tried.size(), std::size_t(5));
    QCOMPARE(tuner.learningRateTrials().size(), std::size_t(5));
    const double chosen = tuner.settings().learningRate;
    double lowest = std::numeric_limits<double>::infinity();
    double lowestRate = 0;
    for (const LearningRateTrial& trial : tuner.learningRateTrials()) {
      if (trial.loss < lowest) lowest = trial.loss, lowestRate = trial.rate;
    }
    QCOMPARE(chosen, lowestRate);
    // The trials trained copies of the steps, not the head: it predicts what the checkpoint does.
    const Model original = loadFp32("seg");
    QVERIFY(at::equal(original.forward(tuner.sampleInput(0)).get("seg_logits"),
                      tuner.predict(0).get("seg_logits")));
    // A stop during the test leaves prepare() unfinished.
    FineTuner stopped(loadFp32("seg"), labels, settings);
    TrainingControl stopControl;
    QVERIFY(!stopped.prepare(
        stopControl, {}, [&](std::size_t, std::size_t, const LearningRateTrial&) { stopControl.stop(); }));
  }

  void userClassesGetAFreshHeadThatLoadsEverywhere() {
    QTemporaryDir dir;
    const std::vector<LabelClass> classes{{"bg", {0, 0, 0}, std::nullopt},
                                          {"dark", {255, 0, 0}, std::nullopt},
                                          {"mid", {0, 255, 0}, std::nullopt},
                                          {"unused", {0, 0, 255}, std::nullopt},
                                          {"bright", {255, 255, 255}, 2.0}};
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString(), classes);
    FineTuner tuner(loadFp32("seg"), labels, quickSettings(40));
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    QCOMPARE(tuner.model().architecture().head.outChannels, 5);
    const TrainingReport report = tuner.train(control);
    QVERIFY(report.lastLoss < report.firstLoss);
    const std::string path = dir.filePath("five.safetensors").toStdString();
    tuner.save(path, true);
    const Model reloaded = Model::load(path, float32());
    QCOMPARE(reloaded.architecture().head.outChannels, 5);
    QVERIFY(at::equal(reloaded.forward(tuner.sampleInput(0)).get("seg_logits"),
                      tuner.predict(0).get("seg_logits")));
    const auto saved = nlohmann::json::parse(readModelMetadata(path).at("classes"));
    QCOMPARE(saved[4]["name"].get<std::string>(), std::string("bright"));
  }

  void poseLossHalvesAndPckRises() {
    QTemporaryDir dir;
    LabelSet labels;
    labels.folder = dir.filePath("pose").toStdString();
    labels.task = Task::Pose;
    // Body keypoints at fixed places of the person box, left/right partners mirrored, so the flipped
    // variant has the same targets: the head has to learn where they are.
    const std::vector<cv::Mat> frames = framesFromSample();
    const int flipPartner[17] = {0, 2, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11, 14, 13, 16, 15};
    for (std::size_t i = 0; i < frames.size(); ++i) {
      FrameLabels frame;
      frame.image = frames[i];
      PersonLabel person;
      person.bbox = BoundingBox{8, 8, kInput.width - 9.0f, kInput.height - 9.0f};
      person.keypoints.assign(308, KeypointLabel{});
      const double cx = (kInput.width - 1) / 2.0;
      for (int k = 0; k < 17; ++k) {
        const int row = (k + 1) / 2;
        const double dx = k == 0 ? 0 : 6.0 + 2 * row;
        const double side = k == 0 ? 0 : (k % 2 == 1 ? -1 : 1);
        person.keypoints[k] = {cx + side * dx, 14.0 + 12.0 * row, 2};
        QCOMPARE(flipPartner[flipPartner[k]], k);
      }
      frame.people.push_back(person);
      addFrame(labels, "p" + std::to_string(i), frame, FrameSplit::Train);
    }
    TrainingSettings settings = quickSettings(150);
    settings.learningRate = 5e-3;
    FineTuner tuner(loadFp32("pose"), labels, settings);
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    const TrainingReport report = tuner.train(control);
    const QString shortfall = learningShortfall(report, 0.5, true, 0.05);  // PCK up by 0.05
    QVERIFY2(shortfall.isEmpty(), qPrintable(shortfall));
    const std::string path = dir.filePath("pose.safetensors").toStdString();
    tuner.save(path, true);
    QVERIFY(at::equal(Model::load(path, float32()).forward(tuner.sampleInput(1)).get("pose_heatmaps"),
                      tuner.predict(1).get("pose_heatmaps")));
  }

  // Keeping what is not taught trains the head as two branches without computing the widened head; a
  // validation frame that places keypoints no training frame does must still be judged on the starting
  // head's predictions of them, as the saved model gives them, not on their targets.
  void aValidationFramePlacingUntaughtKeypointsSeesTheStartingHead() {
    QTemporaryDir dir;
    LabelSet labels;
    labels.folder = dir.filePath("pose").toStdString();
    labels.task = Task::Pose;
    const std::vector<cv::Mat> frames = framesFromSample();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const bool validation = i + 1 == frames.size();
      FrameLabels frame;
      frame.image = frames[i];
      PersonLabel person;
      person.bbox = BoundingBox{8, 8, kInput.width - 9.0f, kInput.height - 9.0f};
      person.keypoints.assign(308, KeypointLabel{});
      for (int k = 0; k < (validation ? 30 : 5); ++k)
        person.keypoints[static_cast<std::size_t>(k)] = {20.0 + 2 * k, 14.0 + 4.0 * k, 2};
      frame.people.push_back(person);
      addFrame(labels, "p" + std::to_string(i), frame,
               validation ? FrameSplit::Validation : FrameSplit::Train);
    }
    TrainingSettings keeping = quickSettings(1);
    keeping.keepStartingHeadWeight = 0;  // the same loss terms as training everything
    TrainingSettings everything = quickSettings(1);
    everything.keepUntaught = false;
    FineTuner branched(loadFp32("pose"), labels, keeping);
    FineTuner whole(loadFp32("pose"), labels, everything);
    TrainingControl control;
    QVERIFY(branched.prepare(control) && whole.prepare(control));
    QVERIFY(branched.model().architecture().head.deconvChannels[0] >
            whole.model().architecture().head.deconvChannels[0]);  // it did branch
    // Before any step both are the starting head.
    const Evaluation a = branched.evaluate(true), b = whole.evaluate(true);
    QCOMPARE(a.samples, std::size_t(1));
    QVERIFY2(
        std::abs(a.loss - b.loss) <= 1e-4 * std::abs(b.loss) && std::abs(a.metric - b.metric) < 1e-9,
        qPrintable(
            QString("loss %1 vs %2, metric %3 vs %4").arg(a.loss).arg(b.loss).arg(a.metric).arg(b.metric)));
  }

  void normalLossHalvesAndTheAngularErrorFalls() {
    QTemporaryDir dir;
    LabelSet labels;
    labels.folder = dir.filePath("normal").toStdString();
    labels.task = Task::Normal;
    for (const cv::Mat& image : framesFromSample()) {
      FrameLabels frame;
      frame.image = image;
      // Normals from the blocks' colour, NaN (no target) in the top rows.
      frame.target = cv::Mat(image.size(), CV_32FC3);
      for (int y = 0; y < image.rows; ++y) {
        for (int x = 0; x < image.cols; ++x) {
          const cv::Vec3b c = image.at<cv::Vec3b>(y / 16 * 16, x / 16 * 16);
          const cv::Vec3f n(c[2] / 255.0f - 0.5f, c[1] / 255.0f - 0.5f, -1.0f);
          frame.target.at<cv::Vec3f>(y, x) = y < 8 ? cv::Vec3f(NAN, NAN, NAN) : n / cv::norm(n);
        }
      }
      addFrame(labels, "n" + std::to_string(labels.frames.size()), frame, FrameSplit::Train);
    }
    FineTuner tuner(loadFp32("normal"), labels, quickSettings(100));
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    const TrainingReport report = tuner.train(control);
    const QString shortfall = learningShortfall(report, 0.5, false, 0);  // the mean angle falls
    QVERIFY2(shortfall.isEmpty(), qPrintable(shortfall));
  }

  // Dense targets imported from a folder of pictures and a folder of .npy (and .exr) targets, then
  // learnt: albedo from the pictures' own colours, a pointmap whose depth follows their brightness.
  void albedoAndPointmapLearnImportedTargets_data() {
    QTest::addColumn<QString>("task");
    QTest::newRow("albedo") << QStringLiteral("albedo");
    QTest::newRow("pointmap") << QStringLiteral("pointmap");
  }

  void albedoAndPointmapLearnImportedTargets() {
    QFETCH(QString, task);
    const Task parsed = *parseTask(task.toStdString());
    QTemporaryDir dir;
    const std::string images = dir.filePath("images").toStdString(),
                      targets = dir.filePath("targets").toStdString();
    std::filesystem::create_directories(images);
    std::filesystem::create_directories(targets);
    const std::vector<cv::Mat> frames = framesFromSample();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::string stem = "f" + std::to_string(i);
      QVERIFY(cv::imwrite(images + "/" + stem + ".png", frames[i]));
      cv::Mat target(frames[i].size(), CV_32FC3);
      for (int y = 0; y < target.rows; ++y) {
        for (int x = 0; x < target.cols; ++x) {
          const cv::Vec3b c = frames[i].at<cv::Vec3b>(y / 16 * 16, x / 16 * 16);
          const float z = 2.0f + (c[0] + c[1] + c[2]) / 765.0f;
          target.at<cv::Vec3f>(y, x) = parsed == Task::Albedo
                                           ? cv::Vec3f(c[2] / 255.0f, c[1] / 255.0f, c[0] / 255.0f)
                                           : cv::Vec3f((x - 48) / 100.0f * z, (y - 64) / 100.0f * z, z);
        }
      }
      if (i == 2 && exrWritingSupported())
        writeExr(targets + "/" + stem + ".exr", target);
      else
        writeNpy(targets + "/" + stem + ".npy", target);
    }
    cv::imwrite(images + "/unpaired.png", frames[0]);  // no target: left out

    const LabelSet labels = importDenseTargets(parsed, images, targets, dir.filePath("set").toStdString());
    QCOMPARE(labels.frames.size(), std::size_t{4});
    const LabelSet reloaded = openLabelSet(labels.folder, parsed);
    QCOMPARE(reloaded.frames.size(), std::size_t{4});
    const FrameLabels third = readFrameLabels(reloaded, 2);
    QCOMPARE(third.target.type(), CV_32FC3);
    QCOMPARE(third.target.size(), frames[2].size());

    TrainingSettings settings = quickSettings(100);
    // The pointmap head's scale branch only runs at the fixture model's own input size (a 12 x 9 grid).
    if (parsed == Task::Pointmap) settings.inputSize = InputSize{144, 192};
    FineTuner tuner(loadFp32(task.toStdString()), reloaded, settings);
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    const TrainingReport report = tuner.train(control);
    qInfo("%s: loss %.4g -> %.4g, metric %.4g -> %.4g", qPrintable(task), report.firstLoss, report.lastLoss,
          report.trainingBefore.metric, report.trainingAfter.metric);
    const QString shortfall = learningShortfall(report, 0.7, false, 0);
    QVERIFY2(shortfall.isEmpty(), qPrintable(shortfall));

    // The preview's prediction is what the saved model gives on that picture in a plain run.
    const std::string saved = dir.filePath("trained.safetensors").toStdString();
    tuner.save(saved, true);
    const Model trained = Model::load(saved, float32());
    const cv::Mat picture = tuner.sampleImage(0);
    const FrameResult predicted = tuner.predictFrame(0);
    const cv::Mat expected = parsed == Task::Albedo
                                 ? estimateAlbedo(trained, picture, settings.inputSize)
                                 : estimatePointmap(trained, picture, settings.inputSize).metric;
    const cv::Mat& map = parsed == Task::Albedo ? predicted.albedo : predicted.pointmap;
    QCOMPARE(map.size(), picture.size());
    QVERIFY2(cv::norm(map, expected, cv::NORM_INF) < 1e-5, qPrintable(task));

    // A target of another size than its picture is refused, naming the file.
    cv::Mat small(8, 8, CV_32FC3, cv::Scalar(0.5, 0.5, 0.5));
    writeNpy(targets + "/f0.npy", small);
    try {
      importDenseTargets(parsed, images, targets, dir.filePath("set2").toStdString());
      QFAIL("a target of the wrong size was imported");
    } catch (const LabelSetError& error) {
      QVERIFY2(QString(error.what()).contains("f0.npy") && QString(error.what()).contains("8x8"),
               error.what());
    }
  }

  // Matting: alpha mattes imported as (H, W) .npy, NaN where unlabelled; the head learns them and its
  // preview is what the saved model gives; an alpha outside [0, 1] is refused with its file.
  void mattingLearnsImportedAlpha() {
    QTemporaryDir dir;
    const std::string images = dir.filePath("images").toStdString(),
                      targets = dir.filePath("targets").toStdString();
    std::filesystem::create_directories(images);
    std::filesystem::create_directories(targets);
    const std::vector<cv::Mat> frames = framesFromSample();
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const std::string stem = "f" + std::to_string(i);
      QVERIFY(cv::imwrite(images + "/" + stem + ".png", frames[i]));
      cv::Mat alpha(frames[i].size(), CV_32FC1);
      for (int y = 0; y < alpha.rows; ++y) {
        for (int x = 0; x < alpha.cols; ++x) {
          const cv::Vec3b c = frames[i].at<cv::Vec3b>(y / 16 * 16, x / 16 * 16);
          alpha.at<float>(y, x) =
              x < 4 ? std::numeric_limits<float>::quiet_NaN() : (c[0] + c[1] + c[2]) / 765.0f;
        }
      }
      writeNpy(targets + "/" + stem + ".npy", alpha);
    }
    const LabelSet labels =
        importDenseTargets(Task::Matting, images, targets, dir.filePath("set").toStdString());
    const LabelSet reloaded = openLabelSet(labels.folder, Task::Matting);
    QCOMPARE(readFrameLabels(reloaded, 1).target.type(), CV_32FC1);

    const TrainingSettings settings = quickSettings(100);
    FineTuner tuner(loadFp32("matting"), reloaded, settings);
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    QCOMPARE(tuner.metric().name, std::string("alpha MAE"));
    const TrainingReport report = tuner.train(control);
    qInfo("matting: loss %.4g -> %.4g, alpha MAE %.4g -> %.4g", report.firstLoss, report.lastLoss,
          report.trainingBefore.metric, report.trainingAfter.metric);
    const QString shortfall = learningShortfall(report, 0.7, false, 0);
    QVERIFY2(shortfall.isEmpty(), qPrintable(shortfall));

    const std::string saved = dir.filePath("trained.safetensors").toStdString();
    tuner.save(saved, true);
    const cv::Mat picture = tuner.sampleImage(0);
    const Matte expected = estimateMatte(Model::load(saved, float32()), picture, settings.inputSize);
    QVERIFY(cv::norm(tuner.predictFrame(0).alpha, expected.alpha, cv::NORM_INF) < 1e-5);

    cv::Mat wrong(frames[0].size(), CV_32FC1, cv::Scalar(2.0f));
    writeNpy(targets + "/f0.npy", wrong);
    try {
      importDenseTargets(Task::Matting, images, targets, dir.filePath("set2").toStdString());
      QFAIL("an alpha of 2 was imported");
    } catch (const LabelSetError& error) {
      QVERIFY2(QString(error.what()).contains("f0.npy") && QString(error.what()).contains("[0, 1]"),
               error.what());
    }
  }

  void pauseStopContinueAndSnapshots() {
    QTemporaryDir dir;
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString());
    TrainingSettings settings = quickSettings(12);
    settings.snapshotEvery = 4;
    settings.snapshotFolder = dir.filePath("snapshots").toStdString();
    FineTuner tuner(loadFp32("seg"), labels, settings);
    TrainingControl control;
    QVERIFY(tuner.prepare(control));

    // Stop from the progress callback (as a GUI thread would between steps).
    TrainingReport report = tuner.train(control, [&](const TrainingProgress& p) {
      if (p.step == 5) control.stop();
    });
    QVERIFY(report.stopped);
    QCOMPARE(report.steps, 5);
    QVERIFY(std::filesystem::exists(settings.snapshotFolder + "/snapshot-step-000004.safetensors"));

    // Pause from another thread, resume it later: train() waits, then finishes.
    control.reset();
    control.pause();
    std::atomic<int> stepWhilePaused{-1};
    std::thread resumer([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      stepWhilePaused = tuner.step();
      control.resume();
    });
    report = tuner.train(control);
    resumer.join();
    QCOMPARE(stepWhilePaused.load(), 5);  // nothing ran while paused
    QVERIFY(!report.stopped);
    QCOMPARE(report.steps, 12);
    const Model snapshot =
        loadFinetunedModel(settings.snapshotFolder + "/snapshot-step-000012.safetensors", float32());
    QVERIFY(at::equal(snapshot.forward(tuner.sampleInput(0)).get("seg_logits"),
                      tuner.predict(0).get("seg_logits")));
  }

  // A learning rate of 1e38 makes the head's outputs overflow within a step or two. Training must stop at
  // the step that would go non-finite, say so, and leave the head (and the snapshots) as the last finite
  // step made it, instead of training on NaN.
  void aDivergingRunStopsAndKeepsTheLastFiniteHead() {
    QTemporaryDir dir;
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString());
    TrainingSettings settings = quickSettings(20);
    settings.learningRate = 1e38;
    settings.snapshotEvery = 1;
    settings.snapshotFolder = dir.filePath("snapshots").toStdString();
    FineTuner tuner(loadFp32("seg"), labels, settings);
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    int divergedAt = 0, kept = -1;
    QString message;
    try {
      tuner.train(control);
    } catch (const TrainingDivergedError& e) {
      divergedAt = e.step();
      kept = e.keptStep();
      message = QString::fromStdString(e.what());
    }
    QVERIFY2(divergedAt >= 1 && divergedAt <= 20, "training at 1e38 did not stop");
    QVERIFY2(message.contains(QString("Training diverged at step %1").arg(divergedAt)), qPrintable(message));
    QVERIFY2(kept >= 0 && kept < divergedAt && message.contains(QString("after step %1").arg(kept)),
             qPrintable(message));
    QCOMPARE(tuner.step(), kept);
    const at::Tensor logits = tuner.predict(0).get("seg_logits");
    QVERIFY2(at::isfinite(logits).all().item<bool>(), "the head kept after the divergence is not finite");
    const auto snapshot = [&](int step) {
      return settings.snapshotFolder + "/" + fmt::format("snapshot-step-{:06d}.safetensors", step);
    };
    for (int step = kept + 1; step <= divergedAt; ++step)
      QVERIFY2(!std::filesystem::exists(snapshot(step)), qPrintable(QString::fromStdString(snapshot(step))));
    if (kept > 0) {
      const Model last = loadFinetunedModel(snapshot(kept), float32());
      QVERIFY(at::equal(last.forward(tuner.sampleInput(0)).get("seg_logits"), logits));
    }
  }

  void theFeatureCacheIsSharedAndSpills() {
    QTemporaryDir dir;
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString());
    auto cache = std::make_shared<FeatureCache>(0, dir.filePath("spill").toStdString());  // everything spills
    TrainingControl control;
    FineTuner first(loadFp32("seg"), labels, quickSettings(3), cache);
    QVERIFY(first.prepare(control));
    // 7 samples but 6 distinct inputs: the validation frame is the mirror image of training frame 1, so
    // its input equals that frame's flipped variant and the content key finds it.
    QCOMPARE(first.samples().size(), std::size_t(7));
    QCOMPARE(cache->size(), std::size_t(6));
    QCOMPARE(cache->spilledEntries(), std::size_t(6));
    QCOMPARE(first.train(control).steps, 3);

    // A second run on the same frames and backbone finds every feature; another backbone finds none.
    std::size_t progressCalls = 0;
    FineTuner second(loadFp32("seg"), labels, quickSettings(3), cache);
    QVERIFY(second.prepare(control, [&](std::size_t, std::size_t) { ++progressCalls; }));
    QCOMPARE(progressCalls, std::size_t(7));
    QCOMPARE(cache->size(), std::size_t(6));
    Model other = loadFp32("seg");
    other.parameters().at("backbone.ln1.weight").mul_(2.0);
    FineTuner third(std::move(other), labels, quickSettings(3), cache);
    QVERIFY(third.prepare(control));
    QCOMPARE(cache->size(), std::size_t(12));
  }

  void theHeadOnCachedFeaturesEqualsTheWholeForwardPass() {
    QTemporaryDir dir;
    const LabelSet labels = makeSegLabelSet(dir.filePath("set").toStdString());
    FineTuner tuner(loadFp32("seg"), labels, quickSettings(1));
    TrainingControl control;
    QVERIFY(tuner.prepare(control));
    const at::Tensor input = tuner.sampleInput(0);
    const at::Tensor cached = tuner.predict(0).get("seg_logits");
    QVERIFY(at::equal(tuner.model().forwardHead(tuner.model().backboneFeatures(input)).get("seg_logits"),
                      cached));
  }
};

QTEST_APPLESS_MAIN(TestFinetuneTraining)
#include "test_finetune_training.moc"
