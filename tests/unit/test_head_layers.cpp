// The heads' transposed convolution: on the CPU it runs through oneDNN's deconvolution, or (without
// oneDNN) a 4x4 one as a sub-pixel 3x3 convolution (see deconv2d), which must compute what ConvTranspose2d
// does, values and gradients, in float32 and in bf16 mixed precision, or training and inference would
// quietly differ from the official heads.

#include "finetune/mixed_precision.h"
#include "model/deconvolution_weight_gradient.h"
#include "model/instance_norm_silu.h"
#include "model/layers.h"
#include "model/onednn_deconvolution.h"
#include "sapiens/common/cpu_features.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/autograd.h>

#include <QtTest>

#include <algorithm>
#include <limits>
#include <vector>

namespace {

double largestDifference(const at::Tensor& a, const at::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// Empty when each gradient is within `relative` of its largest expected magnitude (at least 1), else which
// one differs and by how much.
QString gradientMismatch(const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& expected,
                         double relative) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double scale = std::max(1.0, expected[i].abs().max().item<double>());
    const double difference = largestDifference(got[i].to(at::kFloat), expected[i]);
    if (difference > relative * scale)
      return QString("gradient %1: difference %2 of %3").arg(i).arg(difference).arg(scale);
  }
  return {};
}

// The memory layouts the heads' passes take: NCHW, and channels-last as oneDNN's deconvolutions leave it.
at::MemoryFormat layout(bool channelsLast) {
  return channelsLast ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous;
}

void addLayoutRows() {
  QTest::addColumn<bool>("channelsLast");
  QTest::newRow("NCHW") << false;
  QTest::newRow("channels-last") << true;
}

}  // namespace

class TestHeadLayers : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void deconvolutionMatchesConvTranspose2d_data() {
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("in");
    QTest::addColumn<int>("out");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::addColumn<int>("threads");  // 0: as set
    QTest::newRow("4x4, 8 -> 5 channels, odd size") << 4 << 8 << 5 << 7 << 5 << 0;
    QTest::newRow("4x4, 32 -> 16 channels") << 4 << 32 << 16 << 16 << 12 << 0;
    QTest::newRow("4x4, one pixel") << 4 << 3 << 2 << 1 << 1 << 0;
    // The weights' gradient by its own kernel (deconvolution_weight_gradient.h): tiles of 6 input by 64
    // output channels with partial ones of both, edge rows and columns, long rows, rows in shares of one,
    // two and three threads (14 rows in all).
    QTest::newRow("4x4, 13 -> 70 channels") << 4 << 13 << 70 << 7 << 5 << 0;
    QTest::newRow("4x4, 13 -> 70 channels, one thread") << 4 << 13 << 70 << 7 << 5 << 1;
    QTest::newRow("4x4, 13 -> 70 channels, three threads") << 4 << 13 << 70 << 7 << 5 << 3;
    QTest::newRow("4x4, 6 -> 64 channels, one row") << 4 << 6 << 64 << 1 << 9 << 0;
    QTest::newRow("4x4, 8 -> 256 channels") << 4 << 8 << 256 << 7 << 5 << 0;
    QTest::newRow("4x4, 4 -> 48 channels, long rows") << 4 << 4 << 48 << 5 << 700 << 0;
    QTest::newRow("3x3 (native)") << 3 << 6 << 4 << 5 << 6 << 0;
    QTest::newRow("2x2 (native)") << 2 << 6 << 4 << 5 << 6 << 0;
  }

  void deconvolutionMatchesConvTranspose2d() {
    QFETCH(int, kernel);
    QFETCH(int, in);
    QFETCH(int, out);
    QFETCH(int, height);
    QFETCH(int, width);
    QFETCH(int, threads);
    const int threadsBefore = at::get_num_threads();
    if (threads > 0) at::set_num_threads(threads);
    const auto restoreThreads = qScopeGuard([&] { at::set_num_threads(threadsBefore); });
    at::manual_seed(11);
    const at::Tensor x = at::randn({2, in, height, width}).requires_grad_(true);
    const at::Tensor weight = (at::randn({in, out, kernel, kernel}) * 0.2).requires_grad_(true);
    const std::int64_t padding = kernel == 2 ? 0 : 1, outputPadding = kernel == 3 ? 1 : 0;
    const at::Tensor reference =
        at::conv_transpose2d(x, weight, {}, {2, 2}, {padding, padding}, {outputPadding, outputPadding});
    const at::Tensor ours = sapiens::detail::deconv2d(x, weight);
    QCOMPARE(ours.sizes().vec(), reference.sizes().vec());
    QVERIFY2(at::allclose(ours, reference, 1e-5, 1e-5),
             qPrintable(QString::number(largestDifference(ours, reference))));

    const at::Tensor upstream = at::randn_like(reference);
    if (kernel == 4 && sapiens::cpu::hasAvx512())
      QVERIFY(sapiens::detail::deconvolutionWeightGradientApplies(
          x.contiguous(at::MemoryFormat::ChannelsLast), upstream.contiguous(at::MemoryFormat::ChannelsLast),
          4, 1, 0));
    const auto expected = torch::autograd::grad({reference}, {x, weight}, {upstream});
    const auto got = torch::autograd::grad({ours}, {x, weight}, {upstream});
    const QString mismatch = gradientMismatch(got, expected, 1e-5);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
  }

  // A non-finite output gradient reaches exactly the weights' gradients it touches, as in ConvTranspose2d.
  void deconvolutionWeightGradientKeepsNaN() {
    at::manual_seed(12);
    const at::Tensor x = at::randn({2, 13, 5, 4});
    const at::Tensor weight = (at::randn({13, 70, 4, 4}) * 0.2).requires_grad_(true);
    const at::Tensor upstream = at::randn({2, 70, 10, 8});
    upstream[1][3][0][5] = std::numeric_limits<float>::quiet_NaN();
    const auto expected =
        torch::autograd::grad({at::conv_transpose2d(x, weight, {}, {2, 2}, {1, 1})}, {weight}, {upstream});
    const auto got = torch::autograd::grad({sapiens::detail::deconv2d(x, weight)}, {weight}, {upstream});
    QVERIFY(at::isnan(expected[0]).any().item<bool>());
    QVERIFY(at::equal(at::isnan(got[0]), at::isnan(expected[0])));
  }

  void deconvolutionInBf16ComputesInFloat() {
    at::manual_seed(5);
    const at::Tensor x = at::randn({1, 16, 6, 4});
    const at::Tensor weight = at::randn({16, 8, 4, 4}) * 0.2;
    const at::Tensor reference = at::conv_transpose2d(x, weight, {}, {2, 2}, {1, 1});
    const at::Tensor ours = sapiens::detail::deconv2d(x.to(at::kBFloat16), weight.to(at::kBFloat16));
    QCOMPARE(ours.scalar_type(), at::kBFloat16);
    // The operands' and the result's bf16 rounding only (sums in float32): within 3 % of the largest output.
    QVERIFY(largestDifference(ours.to(at::kFloat), reference) <= 0.03 * reference.abs().max().item<double>());
  }

  // Fine-tuning's bf16 steps (autocast): float32 weights, float32 gradients for them, sums in float32.
  void deconvolutionUnderBf16AutocastKeepsFloatGradients() {
    at::manual_seed(7);
    const at::Tensor x = at::randn({2, 32, 12, 10}).requires_grad_(true);
    const at::Tensor weight = (at::randn({32, 16, 4, 4}) * 0.1).requires_grad_(true);
    const at::Tensor reference = at::conv_transpose2d(x, weight, {}, {2, 2}, {1, 1});
    const at::Tensor upstream = at::randn_like(reference);
    const auto expected = torch::autograd::grad({reference}, {x, weight}, {upstream});

    at::Tensor ours;
    {
      const sapiens::detail::MixedPrecisionScope bf16Steps(true);
      ours = sapiens::detail::deconv2d(x, weight);
    }
    // oneDNN's path computes (and returns) bf16 there; LibTorch's sub-pixel path returns float32.
    if (sapiens::detail::oneDnnDeconvolutionApplies(x, weight) && sapiens::cpu::hasAvx512Bf16())
      QCOMPARE(ours.scalar_type(), at::kBFloat16);
    QVERIFY(largestDifference(ours.to(at::kFloat), reference) <= 0.03 * reference.abs().max().item<double>());
    const auto got = torch::autograd::grad({ours}, {x, weight}, {upstream.to(ours.scalar_type())});
    QCOMPARE(got[0].scalar_type(), at::kFloat);
    QCOMPARE(got[1].scalar_type(), at::kFloat);
    const QString mismatch = gradientMismatch(got, expected, 0.03);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
  }

  // A layer reading frozen features: only the weights' gradient is asked for.
  void deconvolutionWithFrozenInputGivesWeightGradientOnly() {
    at::manual_seed(9);
    const at::Tensor x = at::randn({1, 8, 6, 6});
    const at::Tensor weight = (at::randn({8, 4, 4, 4}) * 0.2).requires_grad_(true);
    const at::Tensor upstream = at::randn({1, 4, 12, 12});
    const auto expected =
        torch::autograd::grad({at::conv_transpose2d(x, weight, {}, {2, 2}, {1, 1})}, {weight}, {upstream});
    const auto got = torch::autograd::grad({sapiens::detail::deconv2d(x, weight)}, {weight}, {upstream});
    QVERIFY(at::allclose(got[0], expected[0], 1e-5, 1e-4));
  }

  void pointwiseConvolutionOfChannelsLastMatchesConv2d_data() {
    QTest::addColumn<int>("in");
    QTest::addColumn<int>("out");
    QTest::addColumn<bool>("withBias");
    QTest::addColumn<bool>("bf16");
    QTest::addColumn<int>("height");
    QTest::newRow("24 -> 5, bias") << 24 << 5 << true << false << 9;
    QTest::newRow("16 -> 7 (sums in registers), no bias") << 16 << 7 << false << false << 9;
    QTest::newRow("70 -> 40 (partial vectors), no bias") << 70 << 40 << false << false << 9;
    QTest::newRow("64 -> 64") << 64 << 64 << true << false << 9;
    // Over 8192 pixels: two tasks, each summing its pixels in chunks of 256, the second task's one partial.
    QTest::newRow("64 -> 48, bias, tasks of chunks") << 64 << 48 << true << false << 597;
    QTest::newRow("bf16, 16 -> 16") << 16 << 16 << true << true << 9;
    QTest::newRow("bf16, 64 -> 29, chunks") << 64 << 29 << true << true << 41;
    QTest::newRow("bf16, 64 -> 64 (oneDNN's matmul)") << 64 << 64 << true << true << 9;
  }

  // A 1x1 convolution of a channels-last tensor runs as one pass over its pixels' channel rows (or a
  // matrix product): what conv2d computes, values and gradients, and the result stays channels-last.
  void pointwiseConvolutionOfChannelsLastMatchesConv2d() {
    QFETCH(int, in);
    QFETCH(int, out);
    QFETCH(bool, withBias);
    QFETCH(bool, bf16);
    QFETCH(int, height);
    at::manual_seed(13);
    const auto dtype = bf16 ? at::kBFloat16 : at::kFloat;
    const at::Tensor x = at::randn({2, in, height, 7}).to(dtype).contiguous(at::MemoryFormat::ChannelsLast);
    const at::Tensor weight = (at::randn({out, in, 1, 1}) * 0.2).to(dtype);
    const at::Tensor bias = withBias ? at::randn({out}).to(dtype) : at::Tensor();
    const auto leaf = [](const at::Tensor& t) { return t.detach().to(at::kFloat).requires_grad_(true); };
    const at::Tensor xRef = leaf(x), weightRef = leaf(weight), biasRef = withBias ? leaf(bias) : at::Tensor();
    const at::Tensor reference = at::conv2d(xRef.contiguous(), weightRef, biasRef);
    x.requires_grad_(true);
    weight.requires_grad_(true);
    if (withBias) bias.requires_grad_(true);
    const at::Tensor ours = sapiens::detail::conv2dSummingInFloat(x, weight, bias, {1, 1}, {0, 0});
    QVERIFY(ours.is_contiguous(at::MemoryFormat::ChannelsLast));
    QCOMPARE(ours.scalar_type(), dtype);
    // float32: the summation order only (the element-wise bound this test had before bf16 rows); bf16:
    // float32 sums, one rounding of the result (2^-8 relative).
    const double scale = std::max(1.0, reference.abs().max().item<double>());
    const bool close = bf16 ? largestDifference(ours.to(at::kFloat), reference) <= scale / 128
                            : at::allclose(ours, reference, 1e-5, 1e-5);
    QVERIFY2(close, qPrintable(QString::number(largestDifference(ours.to(at::kFloat), reference))));
    const at::Tensor upstream = at::randn_like(reference);
    std::vector<at::Tensor> inputs{x, weight}, referenceInputs{xRef, weightRef};
    if (withBias) inputs.push_back(bias), referenceInputs.push_back(biasRef);
    const auto expected = torch::autograd::grad({reference}, referenceInputs, {upstream});
    const auto got = torch::autograd::grad({ours}, inputs, {upstream.to(dtype)});
    const QString mismatch = gradientMismatch(got, expected, bf16 ? 0.02 : 1e-5);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
  }

  // A non-finite output gradient reaches the input's, the weights' and the bias's gradients as in conv2d.
  void pointwiseConvolutionBackwardKeepsNaN() {
    at::manual_seed(14);
    const at::Tensor x =
        at::randn({2, 64, 41, 7}).contiguous(at::MemoryFormat::ChannelsLast).requires_grad_(true);
    const at::Tensor weight = (at::randn({48, 64, 1, 1}) * 0.2).requires_grad_(true);
    const at::Tensor bias = at::randn({48}).requires_grad_(true);
    const at::Tensor upstream = at::randn({2, 48, 41, 7});
    upstream[0][5][30][2] = std::numeric_limits<float>::quiet_NaN();
    const auto expected =
        torch::autograd::grad({at::conv2d(x.contiguous(), weight, bias)}, {x, weight, bias}, {upstream});
    const auto got =
        torch::autograd::grad({sapiens::detail::conv2dSummingInFloat(x, weight, bias, {1, 1}, {0, 0})},
                              {x, weight, bias}, {upstream});
    for (std::size_t i = 0; i < got.size(); ++i) {
      QVERIFY(at::isnan(expected[i]).any().item<bool>());
      QVERIFY2(at::equal(at::isnan(got[i]), at::isnan(expected[i])), qPrintable(QString::number(i)));
    }
  }

  // The seg/pose body as the heads run it (deconvolution, norm + SiLU, 1x1 convolution) from features given
  // as the backbone leaves them (a permuted view of its tokens): what the official layers compute.
  void headBodyFromTokenFeaturesMatchesTheOfficialLayers() {
    at::manual_seed(17);
    const at::Tensor tokens = at::randn({2, 6 * 5, 32});
    const at::Tensor features = tokens.view({2, 6, 5, 32}).permute({0, 3, 1, 2});
    const at::Tensor deconvWeight = (at::randn({32, 16, 4, 4}) * 0.1).requires_grad_(true);
    const at::Tensor convWeight = (at::randn({7, 16, 1, 1}) * 0.2).requires_grad_(true);
    const at::Tensor convBias = at::randn({7}).requires_grad_(true);
    namespace d = sapiens::detail;
    const at::Tensor ours = d::conv2dSummingInFloat(
        d::instanceNormSilu2d(d::deconv2d(features, deconvWeight)), convWeight, convBias, {1, 1}, {0, 0});
    const at::Tensor reference = at::conv2d(at::silu(d::instanceNorm(at::conv_transpose2d(
                                                features.contiguous(), deconvWeight, {}, {2, 2}, {1, 1}))),
                                            convWeight, convBias);
    QVERIFY2(at::allclose(ours, reference, 1e-4, 1e-4),
             qPrintable(QString::number(largestDifference(ours, reference))));
    const at::Tensor upstream = at::randn_like(reference);
    const std::vector<at::Tensor> parameters{deconvWeight, convWeight, convBias};
    const auto expected = torch::autograd::grad({reference}, parameters, {upstream});
    const auto got = torch::autograd::grad({ours}, parameters, {upstream});
    const QString mismatch = gradientMismatch(got, expected, 1e-4);
    QVERIFY2(mismatch.isEmpty(), qPrintable(mismatch));
  }

  void instanceNormSiluMatchesTheComposite_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("height");
    QTest::addColumn<int>("width");
    QTest::addColumn<double>("offset");
    QTest::addColumn<bool>("channelsLast");
    QTest::newRow("planes of 35 (a partial vector)") << 3 << 7 << 5 << 0.0 << false;
    QTest::newRow("planes over one chunk of sums") << 2 << 96 << 72 << 0.0 << false;
    QTest::newRow("mean far from zero") << 2 << 33 << 31 << 1000.0 << false;
    // Channels-last (NHWC in memory, as oneDNN's deconvolutions leave the heads' activations): partial
    // vectors, more than one group of 64 channels, pixels over several parallel blocks.
    QTest::newRow("channels-last, 3 channels") << 3 << 7 << 5 << 0.0 << true;
    QTest::newRow("channels-last, 70 channels") << 70 << 9 << 11 << 0.0 << true;
    QTest::newRow("channels-last, 16 channels over blocks") << 16 << 128 << 80 << 0.0 << true;
    QTest::newRow("channels-last, mean far from zero") << 5 << 33 << 31 << 1000.0 << true;
  }

  // The heads' InstanceNorm + SiLU in one pass: what the composite computes, values and gradient.
  void instanceNormSiluMatchesTheComposite() {
    QFETCH(int, channels);
    QFETCH(int, height);
    QFETCH(int, width);
    QFETCH(double, offset);
    QFETCH(bool, channelsLast);
    const at::Tensor x = (at::randn({2, channels, height, width}) * 3 + offset)
                             .contiguous(layout(channelsLast))
                             .requires_grad_(true);
    if (!sapiens::detail::instanceNormSiluApplies(x))
      QSKIP("the fused pass is off here (no AVX-512, or SAPIENS_FUSED_INSTANCE_NORM=0)");
    const at::Tensor reference = at::silu(sapiens::detail::instanceNorm(x));
    const at::Tensor ours = sapiens::detail::instanceNormSilu(x, sapiens::detail::kInstanceNormEps);
    QVERIFY(ours.is_contiguous(layout(channelsLast)));
    QVERIFY2(at::allclose(ours, reference, 1e-5, 1e-5),
             qPrintable(QString::number(largestDifference(ours, reference))));
    const at::Tensor upstream = at::randn_like(reference);
    const auto expected = torch::autograd::grad({reference}, {x}, {upstream});
    const auto got = torch::autograd::grad({ours}, {x}, {upstream});
    const double scale = expected[0].abs().max().item<double>();
    QVERIFY2(
        largestDifference(got[0], expected[0]) <= 1e-4 * std::max(1.0, scale),
        qPrintable(QString("difference %1 of %2").arg(largestDifference(got[0], expected[0])).arg(scale)));
  }

  void instanceNormSiluInBf16RoundsOnce_data() { addLayoutRows(); }

  void instanceNormSiluInBf16RoundsOnce() {
    QFETCH(bool, channelsLast);
    at::manual_seed(3);
    const at::Tensor x =
        at::randn({1, 20, 20, 30}).to(at::kBFloat16).contiguous(layout(channelsLast)).requires_grad_(true);
    if (!sapiens::detail::instanceNormSiluApplies(x))
      QSKIP("the fused pass is off here (no AVX-512, or SAPIENS_FUSED_INSTANCE_NORM=0)");
    const at::Tensor xFloat = x.detach().to(at::kFloat).requires_grad_(true);
    const at::Tensor reference = at::silu(sapiens::detail::instanceNorm(xFloat));
    const at::Tensor ours = sapiens::detail::instanceNormSilu(x, sapiens::detail::kInstanceNormEps);
    QCOMPARE(ours.scalar_type(), at::kBFloat16);
    // One rounding to bf16: within half a bf16 step (2^-8 relative) of the float32 result.
    const at::Tensor error = (ours.to(at::kFloat) - reference).abs();
    QVERIFY2((error <= reference.abs() * (1.0 / 256) + 1e-6).all().item<bool>(),
             qPrintable(QString::number(error.max().item<double>())));
    const at::Tensor upstream = at::randn_like(reference);
    const auto expected = torch::autograd::grad({reference}, {xFloat}, {upstream});
    const auto got = torch::autograd::grad({ours}, {x}, {upstream.to(at::kBFloat16)});
    QCOMPARE(got[0].scalar_type(), at::kBFloat16);
    QVERIFY(largestDifference(got[0].to(at::kFloat), expected[0]) <=
            0.02 * expected[0].abs().max().item<double>());
  }

  void instanceNormSiluKeepsNonFiniteInItsPlane_data() { addLayoutRows(); }

  // A diverged layer must not look fine: a NaN or an infinity spoils its own plane, and only that one.
  void instanceNormSiluKeepsNonFiniteInItsPlane() {
    QFETCH(bool, channelsLast);
    at::Tensor x = at::randn({1, 3, 8, 8});
    if (!sapiens::detail::instanceNormSiluApplies(x))
      QSKIP("the fused pass is off here (no AVX-512, or SAPIENS_FUSED_INSTANCE_NORM=0)");
    x[0][0][2][3] = std::numeric_limits<float>::quiet_NaN();
    x[0][1][0][0] = std::numeric_limits<float>::infinity();
    x = x.contiguous(layout(channelsLast));
    const at::Tensor y = sapiens::detail::instanceNormSilu(x, sapiens::detail::kInstanceNormEps);
    QVERIFY(at::isnan(y[0][0]).all().item<bool>());
    QVERIFY(!at::isfinite(y[0][1]).any().item<bool>());
    QVERIFY(at::isfinite(y[0][2]).all().item<bool>());
    const at::Tensor bf16 =
        sapiens::detail::instanceNormSilu(x.to(at::kBFloat16), sapiens::detail::kInstanceNormEps);
    QVERIFY(at::isnan(bf16[0][0]).all().item<bool>());
    QVERIFY(at::isfinite(bf16[0][2]).all().item<bool>());
  }
};

QTEST_APPLESS_MAIN(TestHeadLayers)
#include "test_head_layers.moc"
