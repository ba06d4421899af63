// The motion filters against their reference: the Butterworth design and the zero-phase filter equal
// scipy.signal.butter and scipy.signal.filtfilt (Debian's python3-scipy, run here on the same samples)
// within 1e-6, down to the shortest signal filtfilt accepts; the filter refuses what it cannot do; Hampel
// rejection, gap filling on real timestamps and the variable-frame-rate path do what they promise.

#include "sapiens/motion/butterworth.h"
#include "sapiens/motion/gap_fill.h"
#include "sapiens/motion/hampel.h"
#include "sapiens/motion/motion_error.h"
#include "sapiens/motion/series_filter.h"
#include "sapiens/motion/zero_phase_filter.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QtTest>

#include <cmath>
#include <random>

using namespace sapiens::motion;

namespace {

struct FilterCase {
  int order;
  double cutoffHz;
  double sampleRateHz;
  std::vector<double> x;
};

// Reads cases [{order, wn, x}] on stdin, prints [{b, a, y}] as scipy computes them.
const char* kScipyScript = R"(
import json, sys
try:
    from scipy.signal import butter, filtfilt
except ImportError as e:
    print('cannot import scipy (%s): scripts/install-deps installs python3-scipy' % e, file=sys.stderr)
    sys.exit(3)
out = []
for case in json.load(sys.stdin):
    b, a = butter(case['order'], case['wn'])
    y = filtfilt(b, a, case['x'])
    out.append({'b': list(b), 'a': list(a), 'y': list(y)})
print(json.dumps(out))
)";

std::vector<double> noisySine(std::size_t n, double sampleRateHz, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> noise(0.0, 0.3);
  std::vector<double> x;
  for (std::size_t i = 0; i < n; ++i) {
    const double t = double(i) / sampleRateHz;
    x.push_back(20.0 + 15.0 * std::sin(2.0 * M_PI * 1.3 * t) + 4.0 * std::sin(2.0 * M_PI * 9.0 * t) +
                noise(random));
  }
  return x;
}

std::vector<double> step(std::size_t n) {
  std::vector<double> x;
  for (std::size_t i = 0; i < n; ++i) x.push_back(i < n / 2 ? -1.0 : 2.5);
  return x;
}

std::vector<FilterCase> cases() {
  return {
      {4, 6.0, 30.0, noisySine(16, 30.0, 1)},  // the shortest signal a 4th-order filtfilt accepts
      {4, 6.0, 30.0, noisySine(17, 30.0, 2)},    {4, 6.0, 30.0, noisySine(300, 30.0, 3)},
      {4, 6.0, 59.94, noisySine(250, 59.94, 4)}, {4, 1.0, 25.0, step(120)},
      {4, 14.0, 30.0, noisySine(90, 30.0, 5)},    // close to Nyquist
      {2, 6.0, 30.0, noisySine(10, 30.0, 6)},     // the shortest for order 2 (padlen 9)
      {4, 3.0, 240.0, noisySine(400, 240.0, 7)},  // low normalised cutoff
  };
}

QJsonArray toJson(const std::vector<double>& values) {
  QJsonArray array;
  for (double v : values) array.append(v);
  return array;
}

// scipy's answers for `filterCases`; fails the test when scipy cannot run.
QJsonArray scipyReference(const std::vector<FilterCase>& filterCases) {
  QJsonArray input;
  for (const FilterCase& c : filterCases)
    input.append(
        QJsonObject{{"order", c.order}, {"wn", c.cutoffHz / (c.sampleRateHz / 2.0)}, {"x", toJson(c.x)}});
  QProcess python;
  // Debian's interpreter: the one python3-scipy installs into (a pyenv python3 on PATH may lack scipy).
  python.start("/usr/bin/python3", {"-c", kScipyScript});
  python.write(QJsonDocument(input).toJson(QJsonDocument::Compact));
  python.closeWriteChannel();
  const bool finished = python.waitForFinished(120000);
  const QString err = QString::fromUtf8(python.readAllStandardError());
  if (!finished || python.exitStatus() != QProcess::NormalExit || python.exitCode() != 0) {
    qWarning().noquote()
        << "/usr/bin/python3 with scipy failed (scripts/install-deps installs python3-scipy):"
        << python.errorString() << err;
    return {};
  }
  return QJsonDocument::fromJson(python.readAllStandardOutput()).array();
}

double maxAbsDifference(const std::vector<double>& ours, const QJsonArray& theirs) {
  if (int(ours.size()) != theirs.size()) return INFINITY;
  double worst = 0.0;
  for (int i = 0; i < theirs.size(); ++i) worst = std::max(worst, std::abs(ours[i] - theirs[i].toDouble()));
  return worst;
}

}  // namespace

class TestMotionFilters : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void equalsScipyButterAndFiltfilt() {
    const std::vector<FilterCase> filterCases = cases();
    const QJsonArray reference = scipyReference(filterCases);
    QVERIFY2(reference.size() == int(filterCases.size()),
             "no answer from /usr/bin/python3 with scipy: scripts/install-deps installs python3-scipy");
    double worstCoefficient = 0.0;
    double worstSample = 0.0;
    for (std::size_t i = 0; i < filterCases.size(); ++i) {
      const FilterCase& c = filterCases[i];
      const QJsonObject expected = reference[int(i)].toObject();
      const IirCoefficients filter = butterworthLowPass(c.order, c.cutoffHz, c.sampleRateHz);
      const double coefficientDiff = std::max(maxAbsDifference(filter.b, expected["b"].toArray()),
                                              maxAbsDifference(filter.a, expected["a"].toArray()));
      const double sampleDiff = maxAbsDifference(filtfilt(filter, c.x), expected["y"].toArray());
      const QString where =
          QString("case %1: order %2, %3 Hz at %4 fps, %5 samples: |b,a| diff %6, |y| diff %7")
              .arg(i)
              .arg(c.order)
              .arg(c.cutoffHz)
              .arg(c.sampleRateHz)
              .arg(c.x.size())
              .arg(coefficientDiff)
              .arg(sampleDiff);
      QVERIFY2(coefficientDiff < 1e-10, qPrintable(where));
      QVERIFY2(sampleDiff < 1e-6, qPrintable(where));
      worstCoefficient = std::max(worstCoefficient, coefficientDiff);
      worstSample = std::max(worstSample, sampleDiff);
    }
    qInfo("largest difference from scipy: coefficients %.3g, filtered samples %.3g", worstCoefficient,
          worstSample);
  }

  void shortSignalIsRefusedWithItsLength() {
    const IirCoefficients filter = butterworthLowPass(4, 6.0, 30.0);
    QCOMPARE(filtfiltMinimumLength(filter), std::size_t(16));
    try {
      filtfilt(filter, std::vector<double>(15, 1.0));
      QFAIL("15 samples were filtered");
    } catch (const MotionError& e) {
      QVERIFY2(QString(e.what()).contains("more than 15 samples, got 15"), e.what());
    }
  }

  void cutoffAtOrAboveNyquistIsRefused() {
    for (double cutoff : {15.0, 20.0, 0.0}) {
      try {
        butterworthLowPass(4, cutoff, 30.0);
        QFAIL(qPrintable(QString("cutoff %1 Hz at 30 fps was accepted").arg(cutoff)));
      } catch (const MotionError& e) {
        const QString message = e.what();
        QVERIFY2(message.contains(QString("cutoff %1 Hz").arg(cutoff)) &&
                     message.contains("Nyquist frequency 15 Hz") && message.contains("30 fps"),
                 e.what());
      }
    }
  }

  void constantSignalPassesUnchanged() {
    // The steady-state start makes a constant a fixed point: no ringing at the segment's ends.
    const IirCoefficients filter = butterworthLowPass(4, 6.0, 30.0);
    const std::vector<double> y = filtfilt(filter, std::vector<double>(40, 7.25));
    for (double v : y) QVERIFY2(std::abs(v - 7.25) < 1e-9, qPrintable(QString::number(v, 'g', 17)));
  }
  void hampelReplacesASpikeAndKeepsTheSignal() {
    // A slow movement with 0.1 of noise: nothing but the spikes is 3 robust sigmas off its window.
    std::mt19937 random(11);
    std::normal_distribution<double> noise(0.0, 0.1);
    std::vector<double> x;
    for (int i = 0; i < 60; ++i) x.push_back(5.0 * std::sin(2.0 * M_PI * 0.5 * i / 30.0) + noise(random));
    const std::vector<double> clean = x;
    x[20] += 40.0;
    x[0] -= 40.0;  // at the very start too
    QCOMPARE(rejectOutliers(x, HampelSettings{}), std::size_t(2));
    QVERIFY2(std::abs(x[20] - clean[20]) < 0.5, qPrintable(QString::number(x[20] - clean[20])));
    // The first value's window is one-sided (rows 0-3): its median lags a moving signal a little.
    QVERIFY2(std::abs(x[0] - clean[0]) < 1.0, qPrintable(QString::number(x[0] - clean[0])));
    for (std::size_t i = 1; i < x.size(); ++i)
      if (i != 20) QCOMPARE(x[i], clean[i]);
  }

  void shortGapsFilledOnTimestampsLongGapsSplit() {
    SampleTimes times;
    std::vector<double> x;
    // Frames 0-40 at about 10 fps, frame 12 left out of the table; frames 5-7 missing (3), 21-32 (12).
    for (int frame = 0; frame < 41; ++frame) {
      if (frame == 12) continue;
      times.frames.push_back(frame);
      times.seconds.push_back(frame * 0.1 + (frame % 3) * 0.01);
      x.push_back((frame >= 5 && frame <= 7) || (frame >= 21 && frame <= 32) ? NAN
                                                                             : 2.0 * times.seconds.back());
    }
    QCOMPARE(typicalFrameStep(times), std::int64_t(1));
    const std::vector<RowSegment> segments = fillShortGaps(x, times, 10, 1);
    QCOMPARE(segments.size(), std::size_t(2));
    QCOMPARE(segments[0].first, std::size_t(0));
    QCOMPARE(segments[0].last, std::size_t(19));   // frame 20 (row 19: frame 12 is not a row)
    QCOMPARE(segments[1].first, std::size_t(32));  // frame 33
    for (std::size_t r = 5; r <= 7; ++r)  // a straight line in time is filled exactly, uneven times and all
      QVERIFY2(std::abs(x[r] - 2.0 * times.seconds[r]) < 1e-12, qPrintable(QString::number(x[r])));
    // Two rows apart in the table but 12 frames apart in the clip: a long gap.
    SampleTimes sparse{{0.0, 0.1, 1.3, 1.4}, {0, 1, 13, 14}};
    std::vector<double> y{1.0, 1.0, 1.0, 1.0};
    QCOMPARE(fillShortGaps(y, sparse, 10, 1).size(), std::size_t(2));
  }

  void unevenTimestampsFilteredOnAnEvenGrid() {
    // A slow sine sampled at a jittered 30 fps: the filtered series follows it (the 6 Hz low-pass keeps
    // 0.5 Hz), with no segment end effects, and a constant stays exactly constant.
    std::mt19937 random(5);
    std::uniform_real_distribution<double> jitter(-0.004, 0.004);
    SampleTimes times;
    std::vector<double> x;
    for (int frame = 0; frame < 90; ++frame) {
      times.frames.push_back(frame);
      times.seconds.push_back(frame / 30.0 + jitter(random));
      x.push_back(10.0 * std::sin(2.0 * M_PI * 0.5 * times.seconds.back()));
    }
    const FilterPlan plan = planFilter(times, 6.0, 4, 10, HampelSettings{});
    QVERIFY(std::abs(1.0 / plan.intervalSeconds - 30.0) < 0.5);
    const FilteredSeries filtered = filterSeries(x, times, plan);
    double worst = 0.0;
    for (std::size_t r = 0; r < x.size(); ++r) worst = std::max(worst, std::abs(filtered.values[r] - x[r]));
    QVERIFY2(worst < 0.05, qPrintable(QString::number(worst)));
    const FilteredSeries constant = filterSeries(std::vector<double>(90, 3.5), times, plan);
    for (double v : constant.values)
      QVERIFY2(std::abs(v - 3.5) < 1e-9, qPrintable(QString::number(v, 'g', 17)));
  }
};

QTEST_APPLESS_MAIN(TestMotionFilters)
#include "test_motion_filters.moc"
