// Matting from the model to the files: the official pre- and post-processing around the fixture's head
// (stretch enlarging bilinearly, bilinear resize back, clip), and the alpha matte as a 16-bit PNG, the
// cut-out as RGBA and the demo's composite, read back by OpenCV's decoder; a NaN never becomes opaque.

#include "pipeline/image_inference.h"
#include "pipeline/preprocess.h"
#include "sapiens/export/matte_png.h"
#include "sapiens/model/model.h"
#include "sapiens/result/frame_result.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <QTemporaryDir>
#include <QtTest>
#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <limits>

using namespace sapiens;

namespace {

cv::Mat randomPicture(int width, int height, int seed) {
  cv::Mat picture(height, width, CV_8UC3);
  cv::RNG rng(seed);
  rng.fill(picture, cv::RNG::UNIFORM, 0, 256);
  return picture;
}

// The official chain written out with OpenCV and ATen directly: MattingResize (INTER_AREA when
// narrower, else INTER_LINEAR), ImageNet normalisation in RGB, forward, bilinear resize, clip.
at::Tensor referenceMatte(const Model& model, const cv::Mat& bgr, InputSize size) {
  cv::Mat resized, rgb;
  cv::resize(bgr, resized, cv::Size(size.width, size.height), 0, 0,
             size.width < bgr.cols ? cv::INTER_AREA : cv::INTER_LINEAR);
  cv::cvtColor(resized, rgb, cv::COLOR_BGR2RGB);
  rgb.convertTo(rgb, CV_32FC3);
  at::Tensor input =
      at::from_blob(rgb.data, {1, size.height, size.width, 3}, at::kFloat).permute({0, 3, 1, 2});
  const at::Tensor mean = at::tensor({123.675f, 116.28f, 103.53f}).view({1, 3, 1, 1});
  const at::Tensor stdev = at::tensor({58.395f, 57.12f, 57.375f}).view({1, 3, 1, 1});
  input = ((input - mean) / stdev).contiguous();
  const at::Tensor out = model.forward(input).get("matting");
  return at::upsample_bilinear2d(out, {bgr.rows, bgr.cols}, false).clamp(0.0, 1.0);
}

float maxDifference(const cv::Mat& map, const at::Tensor& reference) {
  const at::Tensor ours = at::from_blob(map.data, {map.rows, map.cols, map.channels()}, at::kFloat);
  return (ours - reference.permute({1, 2, 0})).abs().max().item<float>();
}

}  // namespace

class TestMatting : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void theFixtureHeadIsReadAsMatting() {
    const Model model = Model::load(test::fixture("golden/matting/model.safetensors"));
    QCOMPARE(model.task(), Task::Matting);
    QCOMPARE(model.architecture().head.outChannels, 4);
    QCOMPARE(model.architecture().head.upsampleChannels, (std::vector<int>{24, 16, 12, 8}));
    QCOMPARE(model.architecture().head.convChannels, (std::vector<int>{8, 6}));
  }

  void estimateMatteFollowsTheOfficialChain_data() {
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("height");
    QTest::newRow("enlarged (bilinear)") << 40 << 30;
    QTest::newRow("shrunk (area)") << 97 << 131;
  }

  void estimateMatteFollowsTheOfficialChain() {
    QFETCH(int, width);
    QFETCH(int, height);
    const Model model = Model::load(test::fixture("golden/matting/model.safetensors"));
    const cv::Mat picture = randomPicture(width, height, width);
    const InputSize size{48, 64};
    const Matte matte = estimateMatte(model, picture, size);
    QCOMPARE(matte.alpha.type(), CV_32FC1);
    QCOMPARE(matte.alpha.size(), picture.size());
    QCOMPARE(matte.foreground.type(), CV_32FC3);
    const at::Tensor reference = referenceMatte(model, picture, size)[0];
    QVERIFY(maxDifference(matte.alpha, reference.narrow(0, 3, 1)) < 1e-5f);
    QVERIFY(maxDifference(matte.foreground, reference.narrow(0, 0, 3)) < 1e-5f);
    double low = 0, high = 0;
    cv::minMaxLoc(matte.alpha, &low, &high);
    QVERIFY(low >= 0.0 && high <= 1.0 && high > low);
  }

  void segStretchStillEnlargesBicubically() {
    const cv::Mat picture = randomPicture(20, 30, 3);
    cv::Mat cubic, linear;
    cv::resize(picture, cubic, cv::Size(48, 64), 0, 0, cv::INTER_CUBIC);
    cv::resize(picture, linear, cv::Size(48, 64), 0, 0, cv::INTER_LINEAR);
    QCOMPARE(cv::norm(stretchToInput(picture, {48, 64}), cubic, cv::NORM_INF), 0.0);
    QCOMPARE(cv::norm(stretchToInput(picture, {48, 64}, StretchEnlarge::Linear), linear, cv::NORM_INF), 0.0);
  }

  void analyzeImageFillsTheAlphaOfTheFrame() {
    const Model model = Model::load(test::fixture("golden/matting/model.safetensors"));
    const cv::Mat picture = randomPicture(50, 70, 9);
    FrameResult frame;
    AnalysisOptions options;
    options.inputSize = {48, 64};
    analyzeImage(model, picture, frame, options);
    QVERIFY(frame.has(Task::Matting));
    QCOMPARE(frame.alpha.size(), picture.size());
    QCOMPARE(frame.foreground.size(), picture.size());
    QVERIFY(frame.inferenceMs.count(Task::Matting) == 1);
  }

  void alphaPngKeepsSixteenBitsAndNaNIsTransparent() {
    cv::Mat alpha(2, 4, CV_32FC1);
    const float values[] = {0.0f,  1.0f, 0.5f,     0.25f, std::numeric_limits<float>::quiet_NaN(),
                            -0.5f, 2.0f, 0.123456f};
    std::copy(std::begin(values), std::end(values), alpha.ptr<float>());
    QTemporaryDir dir;
    const std::string path = dir.filePath("m.alpha.png").toStdString();
    writeAlphaPng(path, alpha);
    const cv::Mat read = cv::imread(path, cv::IMREAD_UNCHANGED);
    QCOMPARE(read.type(), CV_16UC1);
    const int expected[] = {0, 65535, 32768, 16384, 0, 0, 65535, 8091};
    for (int i = 0; i < 8; ++i) QCOMPARE(int(read.ptr<std::uint16_t>()[i]), expected[i]);
  }

  void cutoutCarriesThePictureAndTheMatte() {
    const cv::Mat picture = randomPicture(4, 2, 5);
    cv::Mat alpha(2, 4, CV_32FC1, cv::Scalar(1.0f));
    alpha.at<float>(0, 1) = 0.0f;
    alpha.at<float>(1, 2) = std::numeric_limits<float>::quiet_NaN();
    alpha.at<float>(1, 3) = 0.5f;
    QTemporaryDir dir;
    const std::string path = dir.filePath("m.cutout.png").toStdString();
    writeCutoutPng(path, picture, alpha);
    const cv::Mat read = cv::imread(path, cv::IMREAD_UNCHANGED);
    QCOMPARE(read.type(), CV_8UC4);
    for (int y = 0; y < 2; ++y) {
      for (int x = 0; x < 4; ++x) {
        const cv::Vec4b p = read.at<cv::Vec4b>(y, x);
        const cv::Vec3b q = picture.at<cv::Vec3b>(y, x);
        QCOMPARE(cv::Vec3b(p[0], p[1], p[2]), q);
      }
    }
    QCOMPARE(int(read.at<cv::Vec4b>(0, 0)[3]), 255);
    QCOMPARE(int(read.at<cv::Vec4b>(0, 1)[3]), 0);
    QCOMPARE(int(read.at<cv::Vec4b>(1, 2)[3]), 0);
    QCOMPARE(int(read.at<cv::Vec4b>(1, 3)[3]), 128);
    QVERIFY_THROWS_EXCEPTION(std::invalid_argument, cutoutImage(picture, cv::Mat(3, 4, CV_32FC1)));
  }

  void compositeIsTheOfficialOneOverChromaGreen() {
    const cv::Mat picture(1, 2, CV_8UC3, cv::Scalar(10, 20, 30));
    cv::Mat alpha(1, 2, CV_32FC1);
    alpha.at<float>(0, 0) = 0.0f;
    alpha.at<float>(0, 1) = 0.5f;
    cv::Mat foreground(1, 2, CV_32FC3, cv::Scalar(0.2f, 0.4f, 0.6f));  // R, G, B
    const cv::Mat composite = mattingComposite(picture, alpha, foreground);
    // fgr_bgr + (1 - alpha) * (64, 177, 0) / 255, clipped, truncated to 8 bits.
    const auto expected = [](float front, float alphaValue, float green) {
      return int(std::min(1.0f, front + (1.0f - alphaValue) * green / 255.0f) * 255.0f);
    };
    const cv::Vec3b second = composite.at<cv::Vec3b>(0, 1);
    QCOMPARE(int(second[0]), expected(0.6f, 0.5f, 64.0f));
    QCOMPARE(int(second[1]), expected(0.4f, 0.5f, 177.0f));
    QCOMPARE(int(second[2]), expected(0.2f, 0.5f, 0.0f));
  }
};

QTEST_APPLESS_MAIN(TestMatting)
#include "test_matting.moc"
