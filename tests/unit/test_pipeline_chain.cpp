// The whole chain on the golden e2e pictures with the real (tiny) models: our pre-processing, our
// forward pass and our post-processing against the official chain's outputs, within the drift the
// fixtures document for a re-implementation.

#include "pipeline/image_inference.h"
#include "pipeline/pose_crop.h"
#include "sapiens/media/image_io.h"
#include "sapiens/model/model.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "sapiens/model/tensor_difference.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include "golden_tensors.h"

#include <QtTest>
#include <opencv2/core.hpp>

#include <cmath>
#include <stdexcept>

namespace {

using sapiens::test::inputSizeOf;
using sapiens::test::maxAbsDifference;
using sapiens::test::tensorOf;
using sapiens::test::tensorOfMat;

std::string golden(const std::string& relative) {
  return sapiens::test::fixture("golden/" + relative);
}

}  // namespace

class PipelineChainTest : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void segChainMatchesOfficial_data();
  void segChainMatchesOfficial();
  void normalChainMatchesOfficial_data();
  void normalChainMatchesOfficial();
  void poseChainMatchesOfficial_data();
  void poseChainMatchesOfficial();
  void analyzeImageFillsTheFrame();
  void albedoAndPointmapRunThroughAnalyzeImage();
  void modelsOfAnotherTaskAreRefused();
};

void PipelineChainTest::segChainMatchesOfficial_data() {
  QTest::addColumn<QString>("key");
  QTest::newRow("img0") << "img0";
  QTest::newRow("img1") << "img1";
}

void PipelineChainTest::segChainMatchesOfficial() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(golden("seg/e2e.safetensors"));
  const sapiens::Model model = sapiens::Model::load(golden("seg/model.safetensors"));
  const cv::Mat image = sapiens::readImageBgr(golden("seg/e2e_" + k + ".png"));
  const at::Tensor officialInput = tensorOf(file, k + ".input");
  const sapiens::InputSize size = inputSizeOf(officialInput);

  const at::Tensor input = sapiens::normalizeImage(sapiens::stretchToInput(image, size));
  QCOMPARE(maxAbsDifference(input, officialInput), 0.0);
  const sapiens::TensorDifference logits =
      sapiens::tensorDifference(model.forward(input).get("seg_logits"), tensorOf(file, k + ".seg_logits"));
  const sapiens::SegResult seg = sapiens::segmentImage(model, image, size);
  const at::Tensor mask = tensorOf(file, k + ".mask");
  const double differing =
      tensorOfMat(seg.labels).squeeze(2).to(at::kLong).ne(mask).to(at::kDouble).mean().item<double>();
  qInfo("seg %s chain: seg_logits max rel %.3g, mask differs on %.3f %% of pixels", k.c_str(),
        logits.maxRelative, 100 * differing);
  QVERIFY2(logits.maxRelative <= 2e-3, qPrintable(QString::number(logits.maxRelative)));
  QVERIFY2(differing <= 0.01, qPrintable(QString::number(differing)));
}

void PipelineChainTest::normalChainMatchesOfficial_data() {
  segChainMatchesOfficial_data();
}

void PipelineChainTest::normalChainMatchesOfficial() {
  QFETCH(QString, key);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(golden("normal/e2e.safetensors"));
  const sapiens::Model model = sapiens::Model::load(golden("normal/model.safetensors"));
  const cv::Mat image = sapiens::readImageBgr(golden("normal/e2e_" + k + ".png"));
  const sapiens::InputSize size = inputSizeOf(tensorOf(file, k + ".input"));

  const sapiens::Letterbox letterbox = sapiens::letterboxToInput(image, size);
  const at::Tensor raw = model.forward(sapiens::normalizeImage(letterbox.image)).get("normal");
  const sapiens::TensorDifference rawDifference =
      sapiens::tensorDifference(raw, tensorOf(file, k + ".normal_raw"));
  const double unitError = maxAbsDifference(sapiens::unitNormals(raw), tensorOf(file, k + ".normal_unit"));
  const cv::Mat normals = sapiens::estimateNormals(model, image, size);
  QCOMPARE(normals.size(), image.size());
  const double imageError = maxAbsDifference(
      tensorOfMat(normals), sapiens::test::unitLengthNormalImage(tensorOf(file, k + ".normal_image")));
  qInfo("normal %s chain: normal_raw max rel %.3g, normal_unit max |d| %.3g, normal_image max |d| %.3g",
        k.c_str(), rawDifference.maxRelative, unitError, imageError);
  QVERIFY2(rawDifference.maxRelative <= 2e-3, qPrintable(QString::number(rawDifference.maxRelative)));
  QVERIFY2(unitError <= 1e-2, qPrintable(QString::number(unitError)));
  QVERIFY2(imageError <= 1e-2, qPrintable(QString::number(imageError)));
}

void PipelineChainTest::poseChainMatchesOfficial_data() {
  QTest::addColumn<QString>("key");
  QTest::addColumn<QString>("png");
  QTest::newRow("case0 whole img0") << "case0"
                                    << "e2e_img0.png";
  QTest::newRow("case1 whole img1") << "case1"
                                    << "e2e_img1.png";
  QTest::newRow("case2 box past the border") << "case2"
                                             << "e2e_img0.png";
}

void PipelineChainTest::poseChainMatchesOfficial() {
  QFETCH(QString, key);
  QFETCH(QString, png);
  const std::string k = key.toStdString();
  const auto file = sapiens::SafetensorsFile::open(golden("pose/e2e.safetensors"));
  const sapiens::Model model = sapiens::Model::load(golden("pose/model.safetensors"));
  const cv::Mat image = sapiens::readImageBgr(golden("pose/" + png.toStdString()));
  const at::Tensor sizeWh = tensorOf(file, k + ".input_size_wh");
  sapiens::PoseOptions options;
  options.inputSize = {static_cast<int>(sizeWh[0].item<std::int64_t>()),
                       static_cast<int>(sizeWh[1].item<std::int64_t>())};
  const at::Tensor flip = tensorOf(file, "flip_indices").contiguous();
  options.flipIndices.assign(flip.data_ptr<std::int64_t>(), flip.data_ptr<std::int64_t>() + flip.numel());
  const at::Tensor box = tensorOf(file, k + ".bbox_xyxy");
  const float* b = box.data_ptr<float>();

  const std::vector<sapiens::PoseInstance> poses =
      sapiens::estimatePoses(model, image, {sapiens::BoundingBox{b[0], b[1], b[2], b[3]}}, options);
  QCOMPARE(poses.size(), std::size_t{1});
  const sapiens::PoseInstance& pose = poses[0];
  QCOMPARE(pose.bboxSource, std::string("user"));

  const at::Tensor scores = tensorOf(file, k + ".keypoint_scores");
  const at::Tensor keypoints = tensorOf(file, k + ".keypoints");
  const at::Tensor stable = tensorOf(file, k + ".keypoint_stable").to(at::kBool);
  const double scoreError =
      maxAbsDifference(at::tensor(pose.scores), scores) / scores.abs().max().item<double>();
  double worstStable = 0;
  int stableCount = 0;
  for (std::int64_t i = 0; i < scores.size(0); ++i) {
    QVERIFY(std::isfinite(pose.keypoints[i][0]) && std::isfinite(pose.keypoints[i][1]));
    if (!stable[i].item<bool>()) continue;
    ++stableCount;
    for (int axis = 0; axis < 2; ++axis) {
      worstStable =
          std::max(worstStable, std::abs(pose.keypoints[i][axis] - keypoints[i][axis].item<double>()));
    }
  }
  qInfo("pose %s chain: keypoint_scores max |d| %.3g x max, %d stable keypoints within %.3g px", k.c_str(),
        scoreError, stableCount, worstStable);
  QVERIFY2(scoreError <= 2e-3, qPrintable(QString::number(scoreError)));
  QVERIFY2(worstStable <= 0.05, qPrintable(QString::number(worstStable)));

  if (k == "case0") {
    // No box: the whole picture, which is exactly case 0's box.
    const auto fallback = sapiens::estimatePoses(model, image, {}, options);
    QCOMPARE(fallback.size(), std::size_t{1});
    QCOMPARE(fallback[0].bboxSource, std::string("full-image"));
    QCOMPARE(fallback[0].bbox.x2, static_cast<float>(image.cols - 1));
    QCOMPARE(fallback[0].keypoints, pose.keypoints);
  }
}

void PipelineChainTest::analyzeImageFillsTheFrame() {
  const sapiens::Model model = sapiens::Model::load(golden("seg/model.safetensors"));
  const cv::Mat image = sapiens::readImageBgr(golden("seg/e2e_img1.png"));
  sapiens::FrameResult frame;
  sapiens::AnalysisOptions options;
  options.inputSize = {48, 64};
  sapiens::analyzeImage(model, image, frame, options);
  QCOMPARE(frame.width, image.cols);
  QCOMPARE(frame.height, image.rows);
  QVERIFY(frame.has(sapiens::Task::Seg));
  QVERIFY(!frame.has(sapiens::Task::Pose));
  QCOMPARE(frame.segLabels.size(), image.size());
  QVERIFY(frame.inferenceMs.count(sapiens::Task::Seg) == 1 && frame.inferenceMs.at(sapiens::Task::Seg) > 0);
}

void PipelineChainTest::albedoAndPointmapRunThroughAnalyzeImage() {
  // No end-to-end fixtures for these two: the chain must equal its documented parts and give sane maps.
  const cv::Mat image = sapiens::readImageBgr(golden("pose/e2e_img0.png"));
  const sapiens::Model albedoModel = sapiens::Model::load(golden("albedo/model.safetensors"));
  sapiens::FrameResult frame;
  sapiens::AnalysisOptions options;
  options.inputSize = {48, 64};
  sapiens::analyzeImage(albedoModel, image, frame, options);
  QVERIFY(frame.has(sapiens::Task::Albedo));
  QCOMPARE(frame.albedo.size(), image.size());
  QCOMPARE(frame.albedo.type(), CV_32FC3);
  double low = 0, high = 0;
  cv::minMaxLoc(frame.albedo.reshape(1), &low, &high);
  QVERIFY(low >= 0.0 && high <= 1.0 && high > low);

  // The pointmap fixture model's scale branch fixes a 144 x 192 input.
  const sapiens::Model pointmapModel = sapiens::Model::load(golden("pointmap/model.safetensors"));
  options.inputSize = {144, 192};
  sapiens::analyzeImage(pointmapModel, image, frame, options);
  QVERIFY(frame.has(sapiens::Task::Pointmap) && frame.has(sapiens::Task::Albedo));
  QVERIFY(frame.pointmapScale.has_value() && frame.intrinsics.has_value());

  const sapiens::Letterbox letterbox = sapiens::letterboxToInput(image, options.inputSize);
  const sapiens::ModelOutputs outputs = pointmapModel.forward(sapiens::normalizeImage(letterbox.image));
  const at::Tensor scale = outputs.get("scale");
  QCOMPARE(*frame.pointmapScale, scale.flatten()[0].item<float>());
  const cv::Mat expected = sapiens::pointmapImage(sapiens::metricPointmap(outputs.get("pointmap"), scale),
                                                  letterbox.padding, image.size());
  QCOMPARE(maxAbsDifference(tensorOfMat(frame.pointmap), tensorOfMat(expected)), 0.0);
  const sapiens::Intrinsics k =
      sapiens::intrinsicsFromScale(*frame.pointmapScale, letterbox.padding, options.inputSize, image.size());
  QCOMPARE(frame.intrinsics->fx, k.fx);
  QCOMPARE(frame.intrinsics->cy, k.cy);
  QVERIFY(at::isfinite(tensorOfMat(frame.pointmap)).all().item<bool>());
}

void PipelineChainTest::modelsOfAnotherTaskAreRefused() {
  const sapiens::Model model = sapiens::Model::load(golden("seg/model.safetensors"));
  const cv::Mat image = sapiens::readImageBgr(golden("seg/e2e_img1.png"));
  try {
    sapiens::estimateNormals(model, image, {48, 64});
    QFAIL("a seg model produced normals");
  } catch (const std::invalid_argument& error) {
    QVERIFY2(QString(error.what()).contains("normal") && QString(error.what()).contains("seg"), error.what());
  }
  QVERIFY_THROWS_EXCEPTION(std::invalid_argument, sapiens::estimatePoses(model, image, {}));
}

QTEST_APPLESS_MAIN(PipelineChainTest)
#include "test_pipeline_chain.moc"
