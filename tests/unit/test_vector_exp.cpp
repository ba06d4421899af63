// The vectorised exponentials of the softmax kernels (attention, fine-tuning's seg loss) against
// std::exp on every instruction set this CPU has: NaN must stay NaN (an AVX2 clamp once turned it into
// about 0, hiding a diverged run), the infinities and the clamp edges must come out as std::exp has them.

#include "model/exp_rows.h"

#include <ATen/ATen.h>

#include <QtTest>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace sapiens::detail;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

const char* pathName(ExpPath path) {
  switch (path) {
    case ExpPath::Scalar:
      return "scalar";
    case ExpPath::Avx2:
      return "AVX2";
    case ExpPath::Avx512:
      return "AVX-512";
  }
  return "?";
}

// Within 4e-7 relative, or 1.2e-38 absolute where std::exp is below FLT_MIN (the kernels give 0 there).
bool agrees(float got, float x) {
  const float want = std::exp(x);
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= 4e-7f * want + 1.2e-38f;
}

// Every value, at every position of a vector (the tails of 16- and 8-wide loops included).
QString check(ExpPath path, const std::vector<float>& values) {
  for (std::size_t length : {std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(15), std::size_t(16),
                             std::size_t(17), std::size_t(33)}) {
    for (std::size_t start = 0; start < values.size(); start += length) {
      std::vector<float> x(
          values.begin() + static_cast<std::ptrdiff_t>(start),
          values.begin() + static_cast<std::ptrdiff_t>(std::min(values.size(), start + length)));
      const std::vector<float> in = x;
      expInPlace(x.data(), static_cast<std::int64_t>(x.size()), path);
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!agrees(x[i], in[i]))
          return QStringLiteral("%1: exp(%2) = %3, std::exp gives %4")
              .arg(pathName(path))
              .arg(static_cast<double>(in[i]), 0, 'g', 9)
              .arg(static_cast<double>(x[i]), 0, 'g', 9)
              .arg(static_cast<double>(std::exp(in[i])), 0, 'g', 9);
    }
  }
  return {};
}

std::vector<ExpPath> availablePaths() {
  std::vector<ExpPath> paths;
  for (ExpPath path : {ExpPath::Scalar, ExpPath::Avx2, ExpPath::Avx512})
    if (expPathAvailable(path)) paths.push_back(path);
  return paths;
}

}  // namespace

class TestVectorExp : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void nanAndInfinitiesAsStdExpHasThem() {
    const std::vector<float> special = {kNaN, 1.0f, -kInf, kNaN, kInf, -1.0f, 0.0f,  -0.0f, kNaN,
                                        kNaN, kInf, -kInf, 2.0f, kNaN, 3.0f,  -kNaN, kNaN,  0.5f};
    for (ExpPath path : availablePaths()) {
      const QString failure = check(path, special);
      QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
  }

  void clampEdgesAndOverflow() {
    // Around the lowest input (-87.34: 2^-126), FLT_MIN's logarithm, the largest finite result
    // (ln FLT_MAX = 88.7228) and beyond.
    std::vector<float> edges;
    for (float centre : {-87.33654f, -87.3365f, -88.0f, -103.9f, -104.0f, -200.0f, 88.3762f, 88.5f, 88.7f,
                         88.72283f, 88.7229f, 88.8f, 89.0f, 100.0f, 1e30f}) {
      float x = centre;
      for (int step = 0; step < 4; ++step) x = std::nextafter(x, -kInf);
      for (int step = 0; step < 9; ++step, x = std::nextafter(x, kInf)) edges.push_back(x);
    }
    for (ExpPath path : availablePaths()) {
      const QString failure = check(path, edges);
      QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
  }

  void randomValuesWithin4e7() {
    std::mt19937 random(7);
    std::uniform_real_distribution<float> wide(-100.0f, 100.0f), softmax(-30.0f, 0.0f);
    std::vector<float> values;
    for (int i = 0; i < 20000; ++i) values.push_back(i % 2 ? wide(random) : softmax(random));
    for (ExpPath path : availablePaths()) {
      const QString failure = check(path, values);
      QVERIFY2(failure.isEmpty(), qPrintable(failure));
    }
  }

  void aNanRowIsNotASoftmaxOfZeros() {
    // The un-normalised softmax of a row with a NaN: its sum is NaN, as at::softmax's would be.
    for (float poison : {kNaN, kInf}) {
      at::Tensor block = at::randn({4, 37});
      block[2][5] = poison;
      at::Tensor sums = at::empty({4});
      if (!expShiftedRows(block, sums)) QSKIP("no AVX2 here: at::softmax runs instead");
      QVERIFY2(std::isnan(sums[2].item<float>()), qPrintable(QString::number(sums[2].item<float>())));
      QVERIFY(std::isfinite(sums[1].item<float>()) && std::isfinite(sums[3].item<float>()));
    }
  }
};

QTEST_APPLESS_MAIN(TestVectorExp)
#include "test_vector_exp.moc"
