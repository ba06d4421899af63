// The fine-tuning panel's Training tab on its own, fed the worker's reports by hand: the settings form,
// the buttons in each training state and the requests they send, the learning rate shown as given or as
// chosen by the range test, the progress line and curves, the before/after preview captions, and the
// over-fitting warning (when it appears, what it suggests, logged once a run, gone on a new best).

#include "loss_chart.h"
#include "prediction_preview.h"
#include "training_tab.h"

#include "sapiens/common/log.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include <string_view>

using sapiens::studio::TrainingState;
using sapiens::studio::TrainingTab;

namespace {

template <typename T>
T* child(QObject* parent, const char* name) {
  T* found = parent->findChild<T*>(QString::fromLatin1(name));
  if (!found) qWarning("no child %s", name);
  return found;
}

QImage filled(QColor color) {
  QImage image(96, 128, QImage::Format_RGB888);
  image.fill(color);
  return image;
}

// One report of a validation evaluation at `step`.
void evaluation(TrainingTab& tab, int step, double loss, bool onValidation = true,
                const QString& snapshot = {}) {
  tab.showProgress(step, 100, 1.0, 1e-3, 5.0, 10.0, true, loss, 0.5, onValidation, snapshot);
}

}  // namespace

class TestTrainingTab : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);
  }

  void settingsFollowTheForm() {
    TrainingTab tab;
    const sapiens::TrainingSettings defaults;
    QCOMPARE(tab.settings().steps, defaults.steps);
    QCOMPARE(tab.settings().learningRate, 0.0);  // auto
    QCOMPARE(child<QDoubleSpinBox>(&tab, "fineTuneLearningRate")->text(), QStringLiteral("auto"));
    QVERIFY(tab.settings().keepUntaught);  // on unless the user turns it off
    QVERIFY(tab.settings().precision == sapiens::TrainingPrecision::Auto);
    child<QSpinBox>(&tab, "fineTuneSteps")->setValue(42);
    child<QSpinBox>(&tab, "fineTuneBatch")->setValue(3);
    child<QDoubleSpinBox>(&tab, "fineTuneLearningRate")->setValue(0.002);
    child<QLineEdit>(&tab, "fineTuneInputSize")->setText(QStringLiteral("128x96"));
    child<QSpinBox>(&tab, "fineTuneEvaluateEvery")->setValue(7);
    child<QSpinBox>(&tab, "fineTuneSnapshotEvery")->setValue(20);
    child<QCheckBox>(&tab, "fineTuneFreshHead")->setChecked(true);
    child<QCheckBox>(&tab, "fineTuneFlip")->setChecked(false);
    child<QCheckBox>(&tab, "fineTuneKeepUntaught")->setChecked(false);
    auto* precision = child<QComboBox>(&tab, "fineTunePrecision");
    precision->setCurrentIndex(precision->findData(int(sapiens::TrainingPrecision::BFloat16)));
    const sapiens::TrainingSettings settings = tab.settings();
    QCOMPARE(settings.steps, 42);
    QCOMPARE(settings.batchSize, 3);
    QCOMPARE(settings.learningRate, 0.002);
    QCOMPARE(settings.inputSize.height, 128);
    QCOMPARE(settings.inputSize.width, 96);
    QCOMPARE(settings.evaluateEvery, 7);
    QCOMPARE(settings.snapshotEvery, 20);
    QVERIFY(settings.snapshotFolder.empty());  // the panel's to fill in
    QVERIFY(settings.freshHead);
    QVERIFY(!settings.horizontalFlip);
    QVERIFY(!settings.keepUntaught);
    QVERIFY(settings.precision == sapiens::TrainingPrecision::BFloat16);
    for (const char* bad : {"128x90", "128", "8x16", "axb"}) {
      child<QLineEdit>(&tab, "fineTuneInputSize")->setText(QString::fromLatin1(bad));
      QVERIFY2(!tab.inputSize(), bad);
    }
    tab.setBaseModel(QStringLiteral(" /models/seg.safetensors "));
    QCOMPARE(tab.baseModel(), QStringLiteral("/models/seg.safetensors"));
  }

  void buttonsFollowTheStateAndSendRequests() {
    TrainingTab tab;
    auto* train = child<QPushButton>(&tab, "fineTuneTrain");
    auto* pause = child<QPushButton>(&tab, "fineTunePause");
    auto* stop = child<QPushButton>(&tab, "fineTuneStop");
    auto* resume = child<QPushButton>(&tab, "fineTuneContinue");
    auto* save = child<QPushButton>(&tab, "fineTuneSave");
    auto enabled = [&] {
      return QString::fromLatin1("%1%2%3%4%5")
          .arg(int(train->isEnabled()))
          .arg(int(pause->isEnabled()))
          .arg(int(stop->isEnabled()))
          .arg(int(resume->isEnabled()))
          .arg(int(save->isEnabled()));
    };
    QCOMPARE(enabled(), QStringLiteral("00000"));  // no set yet
    tab.setState(TrainingState::Idle, true);
    QCOMPARE(enabled(), QStringLiteral("10000"));
    tab.setState(TrainingState::Preparing, true);
    QCOMPARE(enabled(), QStringLiteral("01100"));
    tab.setState(TrainingState::Training, true);
    QCOMPARE(enabled(), QStringLiteral("01101"));
    tab.setState(TrainingState::Stopping, true);
    QCOMPARE(enabled(), QStringLiteral("00000"));
    tab.setState(TrainingState::Stopped, true);
    QCOMPARE(enabled(), QStringLiteral("10011"));
    tab.setState(TrainingState::Finished, true);
    QCOMPARE(enabled(), QStringLiteral("10001"));
    tab.setState(TrainingState::Failed, false);
    QCOMPARE(enabled(), QStringLiteral("00000"));

    QSignalSpy trainRequested(&tab, &TrainingTab::trainRequested);
    QSignalSpy pauseRequested(&tab, &TrainingTab::pauseRequested);
    QSignalSpy resumeRequested(&tab, &TrainingTab::resumeRequested);
    QSignalSpy stopRequested(&tab, &TrainingTab::stopRequested);
    QSignalSpy continueRequested(&tab, &TrainingTab::continueRequested);
    tab.setState(TrainingState::Idle, true);
    QTest::mouseClick(train, Qt::LeftButton);
    QCOMPARE(trainRequested.size(), 1);
    tab.setState(TrainingState::Training, true);
    QCOMPARE(pause->text(), QStringLiteral("Pause"));
    QTest::mouseClick(pause, Qt::LeftButton);
    QCOMPARE(pauseRequested.size(), 1);
    tab.setState(TrainingState::Paused, true);
    QCOMPARE(pause->text(), QStringLiteral("Resume"));
    QCOMPARE(child<QLabel>(&tab, "fineTuneStats")->text(),
             QStringLiteral("Pausing after the current step..."));
    tab.showPausedAt(12);
    QCOMPARE(child<QLabel>(&tab, "fineTuneStats")->text(), QStringLiteral("Paused at step 12"));
    tab.setState(TrainingState::Paused, true);  // again (the panel refreshes): the line stays
    QCOMPARE(child<QLabel>(&tab, "fineTuneStats")->text(), QStringLiteral("Paused at step 12"));
    QTest::mouseClick(pause, Qt::LeftButton);
    QCOMPARE(resumeRequested.size(), 1);
    QCOMPARE(pauseRequested.size(), 1);
    QTest::mouseClick(stop, Qt::LeftButton);
    QCOMPARE(stopRequested.size(), 1);
    tab.setState(TrainingState::Stopped, true);
    QTest::mouseClick(resume, Qt::LeftButton);
    QCOMPARE(continueRequested.size(), 1);
  }

  void theLearningRateIsGivenOrChosen() {
    TrainingTab tab;
    sapiens::TrainingSettings settings;
    settings.learningRate = 0;
    tab.beginRun(settings);
    QVERIFY2(tab.learningRateText().contains(QStringLiteral("auto")), qPrintable(tab.learningRateText()));
    const QString trials = QStringLiteral("3e-04: loss 8.2116, 1e-03: loss 7.8747, 3e-02: loss 5.0000");
    tab.showLearningRate(0.03, trials);
    QCOMPARE(tab.learningRateText(),
             QStringLiteral("Learning rate 3e-02 (chosen by a range test: %1)").arg(trials));
    QCOMPARE(child<QLabel>(&tab, "fineTuneLearningRateUsed")->text(), tab.learningRateText());

    settings.learningRate = 2.5e-4;
    tab.beginRun(settings);
    QCOMPARE(tab.learningRateText(), QStringLiteral("Learning rate 2.5e-04 (given)"));
    tab.showLearningRate(2.5e-4, {});
    QCOMPARE(tab.learningRateText(), QStringLiteral("Learning rate 2.5e-04 (given)"));
  }

  void progressFillsTheCurvesAndTheStatsLine() {
    TrainingTab tab;
    tab.setState(TrainingState::Training, true);
    tab.showTrainingStarted(QStringLiteral("mIoU"), true, 100, 0);
    QCOMPARE(tab.metricChart()->title(), QStringLiteral("mIoU (higher is better)"));
    tab.showProgress(1, 100, 2.0, 1e-3, 4.0, 25.0, false, 0, 0, false, {});
    evaluation(tab, 2, 1.5, false);
    QCOMPARE(tab.lossChart()->pointCount(0), 2);
    QCOMPARE(tab.lossChart()->pointCount(1), 1);
    QCOMPARE(tab.metricChart()->pointCount(0), 1);
    const QString stats = child<QLabel>(&tab, "fineTuneStats")->text();
    QVERIFY2(stats.startsWith(QStringLiteral("Step 2/100, 5.00 steps/s, 0m10s left")) &&
                 stats.contains(QStringLiteral("mIoU 0.5000 (training frames)")),
             qPrintable(stats));
    // Paused: the curves still grow, the line keeps saying paused.
    tab.setState(TrainingState::Paused, true);
    tab.showPausedAt(3);
    tab.showProgress(3, 100, 1.0, 1e-3, 4.0, 25.0, false, 0, 0, false, {});
    QCOMPARE(tab.lossChart()->pointCount(0), 3);
    QCOMPARE(child<QLabel>(&tab, "fineTuneStats")->text(), QStringLiteral("Paused at step 3"));
    // A snapshot is a note for the panel's message line.
    QSignalSpy messages(&tab, &TrainingTab::messageShown);
    tab.setState(TrainingState::Training, true);
    tab.showProgress(4, 100, 1.0, 1e-3, 4.0, 25.0, false, 0, 0, false, QStringLiteral("/s/snapshot-4"));
    QCOMPARE(messages.size(), 1);
    QVERIFY(messages.first().at(0).toString().contains(QStringLiteral("snapshot-4")));
    tab.showFinished(false, 100);
    QCOMPARE(child<QLabel>(&tab, "fineTuneStats")->text(), QStringLiteral("Finished: 100 steps"));
    tab.beginRun({});
    QCOMPARE(tab.lossChart()->pointCount(0), 0);
    QCOMPARE(tab.metricChart()->pointCount(0), 0);
  }

  void thePreviewShowsBeforeAndAfter() {
    TrainingTab tab;
    tab.resize(600, 900);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    sapiens::studio::PredictionPreview* preview = tab.preview();
    QVERIFY(preview->beforeImage().isNull() && preview->afterImage().isNull());
    tab.showPreview(filled(Qt::red), 0, true, true);
    QCOMPARE(preview->beforeImage(), filled(Qt::red));
    QVERIFY(preview->afterImage().isNull());
    QCOMPARE(preview->beforeCaption(), QStringLiteral("Before training (step 0): the held-out frame"));
    tab.showPreview(filled(Qt::green), 25, true, false);
    tab.showPreview(filled(Qt::blue), 50, true, false);
    QCOMPARE(preview->beforeImage(), filled(Qt::red));
    QCOMPARE(preview->afterImage(), filled(Qt::blue));
    QCOMPARE(preview->afterCaption(), QStringLiteral("After step 50: the held-out frame"));
    QCOMPARE(child<QLabel>(&tab, "fineTunePreviewCaption")->text(), preview->afterCaption());
    QCOMPARE(child<QLabel>(&tab, "fineTunePreviewBeforeCaption")->text(), preview->beforeCaption());
    // Both on show, side by side.
    QWidget* before = child<QWidget>(&tab, "fineTunePreviewBefore");
    QWidget* after = child<QWidget>(&tab, "fineTunePreview");
    QVERIFY(before->isVisible() && after->isVisible());
    QVERIFY(before->width() > 50 && after->width() > 50);
    QCOMPARE(before->y(), after->y());
    QVERIFY(before->x() + before->width() <= after->x());
    // No held-out frame: the first training frame, and the captions say so.
    tab.showPreview(filled(Qt::red), 0, false, true);
    QVERIFY2(preview->beforeCaption().contains(QStringLiteral("training frame (none held out)")),
             qPrintable(preview->beforeCaption()));
    tab.beginRun({});
    QVERIFY(preview->beforeImage().isNull() && preview->afterImage().isNull());
  }

  // 100 steps, evaluated every 5: the best at step 20, above it from 25; ten steps of patience from step 20
  // are reached at step 30. Evaluations of the training frames (no held-out frame) never warn.
  void overfittingIsWarnedOfOnceARun() {
    TrainingTab tab;
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    int logged = 0;
    const int callback = sapiens::log::addCallback([&](sapiens::log::Level level, std::string_view message) {
      if (level == sapiens::log::Level::Warn && message.find("Over-fitting") != std::string_view::npos)
        ++logged;
    });
    sapiens::TrainingSettings settings;
    settings.steps = 100;
    tab.beginRun(settings);
    tab.setState(TrainingState::Training, true);
    auto* warning = child<QLabel>(&tab, "fineTuneOverfitting");
    QVERIFY(!warning->isVisible());
    evaluation(tab, 5, 2.0);
    evaluation(tab, 10, 1.5, true, QStringLiteral("/set/snapshots/snapshot-step-000010.safetensors"));
    evaluation(tab, 15, 1.2);
    evaluation(tab, 20, 1.0, true, QStringLiteral("/set/snapshots/snapshot-step-000020.safetensors"));
    evaluation(tab, 25, 1.1);
    QVERIFY(!warning->isVisible());
    QVERIFY(tab.overfittingWarning().isEmpty());
    evaluation(tab, 30, 1.2, true, QStringLiteral("/set/snapshots/snapshot-step-000030.safetensors"));
    QVERIFY(warning->isVisible());
    QVERIFY(!warning->styleSheet().isEmpty());
    const QString text = tab.overfittingWarning();
    QCOMPARE(text, warning->text());
    QVERIFY2(text.contains(QStringLiteral("best (1.0000 at step 20) for 10 steps")) &&
                 text.contains(QStringLiteral("fewer steps (about 20)")) &&
                 text.contains(QStringLiteral("more frames")) &&
                 text.contains(QStringLiteral("snapshot of step 20")) &&
                 text.contains(QStringLiteral("snapshot-step-000020.safetensors")),
             qPrintable(text));
    QCOMPARE(logged, 1);
    evaluation(tab, 35, 1.3);
    QVERIFY(tab.overfittingWarning().contains(QStringLiteral("for 15 steps")));
    QCOMPARE(logged, 1);  // once a run
    // A new best: over-fitting no more.
    evaluation(tab, 40, 0.8);
    QVERIFY(!warning->isVisible());
    QVERIFY(tab.overfittingWarning().isEmpty());

    // A new run warns (and logs) again; a rising loss on the training frames does not count.
    tab.beginRun(settings);
    QVERIFY(tab.overfittingWarning().isEmpty());
    for (int step = 5; step <= 60; step += 5) evaluation(tab, step, 1.0 + step, false);
    QVERIFY(tab.overfittingWarning().isEmpty());
    QVERIFY(!tab.overfittingMonitor().latestStep());
    tab.beginRun(settings);
    evaluation(tab, 5, 1.0);
    evaluation(tab, 15, 2.0);
    QVERIFY2(tab.overfittingWarning().contains(QStringLiteral("Snapshot every")),
             qPrintable(tab.overfittingWarning()));
    QCOMPARE(logged, 2);
    sapiens::log::removeCallback(callback);
  }
};

QTEST_MAIN(TestTrainingTab)
#include "test_training_tab.moc"
