// finetune/overfitting_monitor: the over-fitting rule of the fine-tuning panel. The validation loss above
// its best for max(1, totalSteps / 10) steps, counted from the last evaluation that was not above it, and
// by more than the margin; a new best or a loss back near the best ends it.

#include "sapiens/finetune/overfitting_monitor.h"

#include <QtTest>

#include <cmath>
#include <limits>

using sapiens::OverfittingMonitor;

class TestOverfittingMonitor : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void patienceIsATenthOfTheStepsAndAtLeastOne() {
    QCOMPARE(OverfittingMonitor(500).patienceSteps(), 50);
    QCOMPARE(OverfittingMonitor(59).patienceSteps(), 5);
    QCOMPARE(OverfittingMonitor(9).patienceSteps(), 1);
    QCOMPARE(OverfittingMonitor(0).patienceSteps(), 1);
  }

  void nothingBeforeAnyEvaluation() {
    const OverfittingMonitor monitor(100);
    QVERIFY(!monitor.overfitting());
    QVERIFY(!monitor.hasOverfitted());
    QVERIFY(!monitor.bestStep());
    QVERIFY(!monitor.latestStep());
    QCOMPARE(monitor.stepsAboveBest(), 0);
  }

  void aFallingLossNeverWarns() {
    OverfittingMonitor monitor(100);
    for (int step = 5; step <= 100; step += 5) {
      monitor.addEvaluation(step, 10.0 / step);
      QVERIFY(!monitor.overfitting());
    }
    QCOMPARE(*monitor.bestStep(), 100);
    QVERIFY(!monitor.hasOverfitted());
  }

  // 100 steps, evaluated every 5: the best at step 20, above it from step 25. Counted from step 20, the
  // rise reaches the 10 steps of patience at step 30, not at 25.
  void aRiseWarnsOnceItHasLastedATenthOfTheSteps() {
    OverfittingMonitor monitor(100);
    monitor.addEvaluation(5, 2.0);
    monitor.addEvaluation(10, 1.5);
    monitor.addEvaluation(15, 1.2);
    monitor.addEvaluation(20, 1.0);
    monitor.addEvaluation(25, 1.1);
    QCOMPARE(monitor.stepsAboveBest(), 5);
    QVERIFY(!monitor.overfitting());
    monitor.addEvaluation(30, 1.05);
    QCOMPARE(monitor.stepsAboveBest(), 10);
    QVERIFY(monitor.overfitting());
    QVERIFY(monitor.hasOverfitted());
    QCOMPARE(*monitor.bestStep(), 20);
    QCOMPARE(monitor.bestLoss(), 1.0);
    QCOMPARE(*monitor.latestStep(), 30);
    QCOMPARE(monitor.latestLoss(), 1.05);
    monitor.addEvaluation(60, 1.5);
    QCOMPARE(monitor.stepsAboveBest(), 40);
    QVERIFY(monitor.overfitting());
  }

  // Evaluated every step (evaluateEvery 1) with 10 steps in all: one step above the best is enough.
  void everyStepWithFewStepsWarnsAtTheFirstRise() {
    OverfittingMonitor monitor(10);
    monitor.addEvaluation(1, 3.0);
    QVERIFY(!monitor.overfitting());
    monitor.addEvaluation(2, 3.5);
    QVERIFY(monitor.overfitting());
  }

  // A new best ends the warning (hasOverfitted remembers it); the count starts again from there.
  void aNewBestEndsIt() {
    OverfittingMonitor monitor(20);
    monitor.addEvaluation(1, 1.0);
    monitor.addEvaluation(3, 2.0);
    QVERIFY(monitor.overfitting());
    monitor.addEvaluation(4, 0.9);
    QVERIFY(!monitor.overfitting());
    QVERIFY(monitor.hasOverfitted());
    QCOMPARE(*monitor.bestStep(), 4);
    monitor.addEvaluation(5, 1.0);
    QVERIFY(!monitor.overfitting());  // 1 step above, patience 2
    monitor.addEvaluation(6, 1.0);
    QVERIFY(monitor.overfitting());
  }

  // Within the margin (1% of the best) counts as not above: a flat loss does not warn, and an evaluation
  // back near the best restarts the count without becoming the best.
  void aLossFlatAtItsBestDoesNotWarn() {
    OverfittingMonitor monitor(10);
    monitor.addEvaluation(1, 1.0);
    for (int step = 2; step <= 10; ++step) monitor.addEvaluation(step, 1.0 + 0.005 * (step % 2));
    QVERIFY(!monitor.overfitting());
    QVERIFY(!monitor.hasOverfitted());
    QCOMPARE(*monitor.bestStep(), 10);  // the latest of equal losses

    OverfittingMonitor rising(100);
    rising.addEvaluation(10, 1.0);
    rising.addEvaluation(20, 1.2);
    QVERIFY(rising.overfitting());
    rising.addEvaluation(30, 1.005);  // near the best again
    QVERIFY(!rising.overfitting());
    QCOMPARE(*rising.bestStep(), 10);
    rising.addEvaluation(35, 1.2);
    QCOMPARE(rising.stepsAboveBest(), 5);
    QVERIFY(!rising.overfitting());

    OverfittingMonitor exact(10, 0.0);
    exact.addEvaluation(1, 1.0);
    exact.addEvaluation(2, 1.001);
    QVERIFY(exact.overfitting());
  }

  void nonFiniteAndOutOfOrderEvaluationsAreIgnored() {
    OverfittingMonitor monitor(10);
    monitor.addEvaluation(1, std::numeric_limits<double>::quiet_NaN());
    QVERIFY(!monitor.latestStep());
    monitor.addEvaluation(2, 1.0);
    monitor.addEvaluation(3, std::numeric_limits<double>::infinity());
    monitor.addEvaluation(2, 5.0);
    monitor.addEvaluation(1, 5.0);
    QCOMPARE(*monitor.latestStep(), 2);
    QCOMPARE(monitor.latestLoss(), 1.0);
    QVERIFY(!monitor.overfitting());
  }

  void resetStartsANewRun() {
    OverfittingMonitor monitor(10);
    monitor.addEvaluation(1, 1.0);
    monitor.addEvaluation(2, 2.0);
    QVERIFY(monitor.hasOverfitted());
    monitor.reset(100);
    QVERIFY(!monitor.hasOverfitted() && !monitor.overfitting() && !monitor.bestStep());
    QCOMPARE(monitor.patienceSteps(), 10);
    monitor.addEvaluation(1, 5.0);  // step 1 again: accepted after the reset
    QCOMPARE(*monitor.bestStep(), 1);
  }
};

QTEST_APPLESS_MAIN(TestOverfittingMonitor)
#include "test_overfitting_monitor.moc"
