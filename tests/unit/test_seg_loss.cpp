// The fused seg training loss against the composite ATen expression it replaces: the same value and the
// same gradient (autograd through the composite), with unlabelled pixels, classes absent from a sample,
// a sample without any foreground, and the starting head's labels kept on the unlabelled pixels.

#include "finetune/seg_loss.h"

#include <ATen/ATen.h>

#include <QtTest>

using namespace sapiens::detail;

namespace {

struct Case {
  at::Tensor logits;
  SegLossTargets targets;
};

Case makeCase(std::int64_t batch, std::int64_t classes, std::int64_t height, std::int64_t width, bool keep,
              std::uint64_t seed) {
  at::manual_seed(seed);
  Case c;
  c.logits = at::randn({batch, classes, height, width}) * 3;
  // A few classes per sample; a third of the pixels unlabelled; the last sample background only.
  at::Tensor labels = at::randint(0, 4, {batch, height, width}, at::kLong) * 2;
  labels = at::where(at::rand({batch, height, width}) < 0.33, at::full_like(labels, 255), labels);
  if (batch > 1)
    labels[batch - 1] =
        at::where(labels[batch - 1] == 255, labels[batch - 1], at::zeros_like(labels[batch - 1]));
  c.targets.labels = labels;
  c.targets.classWeights = at::rand({classes}) * 5 + 0.1;
  if (keep) {
    // A tenth of them without one (near the paint, where the starting head's labels are left out).
    c.targets.teacherLabels = at::randint(0, classes, {batch, height, width}, at::kByte);
    c.targets.teacherLabels.masked_fill_(at::rand({batch, height, width}) < 0.1, 255);
    c.targets.distillWeights = at::rand({batch, 1}) + 0.25;
  }
  return c;
}

}  // namespace

class TestSegLoss : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void fusedEqualsCompositeInValueAndGradient_data() {
    QTest::addColumn<bool>("keep");
    QTest::addColumn<int>("width");
    QTest::newRow("labels only") << false << 45;
    QTest::newRow("starting head kept") << true << 45;
    QTest::newRow("more than a block per row") << true << 700;
  }

  void fusedEqualsCompositeInValueAndGradient() {
    QFETCH(bool, keep);
    QFETCH(int, width);
    const Case c = makeCase(3, 29, 7, width, keep, 11);
    QVERIFY(fusedSegLossApplies(c.logits));

    const at::Tensor a = c.logits.clone().requires_grad_(true);
    const at::Tensor fused = fusedSegLoss(a, c.targets);
    (fused * 1.7).backward();
    const at::Tensor b = c.logits.to(at::kDouble).requires_grad_(true);
    SegLossTargets reference = c.targets;
    reference.classWeights = reference.classWeights.to(at::kDouble);
    if (keep) reference.distillWeights = reference.distillWeights.to(at::kDouble);
    const at::Tensor composite = compositeSegLoss(b, reference);
    (composite * 1.7).backward();

    const double value = fused.item<double>(), expected = composite.item<double>();
    QVERIFY2(std::abs(value - expected) <= 1e-5 * std::abs(expected),
             qPrintable(QString("fused %1, composite %2").arg(value, 0, 'g', 10).arg(expected, 0, 'g', 10)));
    const at::Tensor difference = (a.grad().to(at::kDouble) - b.grad()).abs();
    const double scale = b.grad().abs().max().item<double>();
    QVERIFY(scale > 0);
    const double worst = difference.max().item<double>();
    QVERIFY2(worst <= 1e-5 * scale,
             qPrintable(QString("gradient differs by %1 (largest %2)").arg(worst).arg(scale)));
  }

  void inferenceModeGivesTheValueWithoutAGraph() {
    const Case c = makeCase(2, 5, 4, 6, true, 3);
    const double withGrad = fusedSegLoss(c.logits, c.targets).item<double>();
    c10::InferenceMode inference;
    const at::Tensor logits = c.logits.clone();
    const at::Tensor loss = fusedSegLoss(logits, c.targets);
    QVERIFY(!loss.requires_grad());
    QCOMPARE(loss.item<double>(), withGrad);
  }

  void nothingLabelledAndNothingKeptIsZero() {
    Case c = makeCase(2, 5, 4, 6, false, 5);
    c.targets.labels.fill_(255);
    QCOMPARE(fusedSegLoss(c.logits, c.targets).item<double>(), 0.0);
  }
};

QTEST_APPLESS_MAIN(TestSegLoss)
#include "test_seg_loss.moc"
