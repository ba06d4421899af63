#include "motion_dock.h"

#include "background_work.h"
#include "file_dialogs.h"

#include "sapiens/common/log.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMouseEvent>
#include <QPen>
#include <QPushButton>
#include <QThreadPool>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace sapiens::studio {
namespace {

const QColor kRawColor(190, 190, 190);
const QColor kFilteredColor(31, 119, 180);
const QColor kCursorColor(214, 39, 40);

// Column `column` of `table` as runs of finite (time, value) points: a missing value breaks the line.
std::vector<QList<QPointF>> finiteRuns(const motion::AngleTable& table, std::size_t column) {
  std::vector<QList<QPointF>> runs(1);
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const double value = table.rows[r][column];
    if (std::isfinite(value)) {
      runs.back().append(QPointF(table.times.seconds[r], value));
    } else if (!runs.back().isEmpty()) {
      runs.emplace_back();
    }
  }
  if (runs.back().isEmpty()) runs.pop_back();
  return runs;
}

QString framesText(std::size_t frames) {
  return frames == 1 ? QObject::tr("1 frame") : QObject::tr("%1 frames").arg(frames);
}

bool hasValue(const motion::AngleTable& table, std::size_t column) {
  return std::any_of(table.rows.begin(), table.rows.end(),
                     [column](const auto& row) { return std::isfinite(row[column]); });
}

}  // namespace

MotionDock::MotionDock(QThreadPool* pool, QWidget* parent) : QWidget(parent), pool_(pool) {
  setObjectName(QStringLiteral("motionDockPanel"));
  track_ = new QComboBox;
  track_->setObjectName(QStringLiteral("motionTrack"));
  track_->setToolTip(tr("The tracked person whose motion is shown"));
  angle_ = new QComboBox;
  angle_->setObjectName(QStringLiteral("motionAngle"));
  angle_->setToolTip(tr("The joint angle shown over time (degrees)"));
  angle_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  analyse_ = new QPushButton(tr("Analyse"));
  analyse_->setObjectName(QStringLiteral("motionAnalyse"));
  analyse_->setToolTip(
      tr("Joint angles of every tracked person over the frames shown so far with results "
         "(needs Pose and Pointmap)"));
  savePng_ = new QPushButton(tr("Save as PNG..."));
  savePng_->setObjectName(QStringLiteral("motionSavePng"));
  savePng_->setEnabled(false);
  status_ = new QLabel(tr("Play or step through a video with Pose and Pointmap checked, then Analyse"));
  status_->setObjectName(QStringLiteral("motionStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* trackLabel = new QLabel(tr("&Person"));
  trackLabel->setBuddy(track_);
  auto* angleLabel = new QLabel(tr("An&gle"));
  angleLabel->setBuddy(angle_);
  auto* bar = new QHBoxLayout;
  bar->addWidget(trackLabel);
  bar->addWidget(track_);
  bar->addWidget(angleLabel);
  bar->addWidget(angle_);
  bar->addWidget(analyse_);
  bar->addStretch(1);
  bar->addWidget(savePng_);
  buildChart();
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(bar);
  layout->addWidget(status_);
  layout->addWidget(chartView_, 1);

  connect(analyse_, &QPushButton::clicked, this, &MotionDock::analyse);
  connect(savePng_, &QPushButton::clicked, this, &MotionDock::chooseSavePath);
  connect(track_, &QComboBox::currentIndexChanged, this, [this] { fillAngles(); });
  connect(angle_, &QComboBox::currentIndexChanged, this, [this] { showAngle(); });
}

void MotionDock::buildChart() {
  chart_ = new QChart;
  chart_->legend()->setAlignment(Qt::AlignBottom);
  chart_->setMargins(QMargins(4, 4, 4, 4));
  timeAxis_ = new QValueAxis;
  timeAxis_->setTitleText(tr("time (s)"));
  timeAxis_->setLabelFormat(QStringLiteral("%.2f"));
  degreesAxis_ = new QValueAxis;
  degreesAxis_->setTitleText(tr("degrees"));
  degreesAxis_->setLabelFormat(QStringLiteral("%.0f"));
  chart_->addAxis(timeAxis_, Qt::AlignBottom);
  chart_->addAxis(degreesAxis_, Qt::AlignLeft);
  chartView_ = new QChartView(chart_);
  chartView_->setObjectName(QStringLiteral("motionChart"));
  chartView_->setRenderHint(QPainter::Antialiasing);
  chartView_->setMinimumSize(320, 180);
  chartView_->viewport()->installEventFilter(this);
  chartView_->viewport()->setCursor(Qt::PointingHandCursor);
}

void MotionDock::setSource(std::function<RecordedFrames()> frames, std::function<float()> keypointThreshold) {
  frames_ = std::move(frames);
  keypointThreshold_ = std::move(keypointThreshold);
}

void MotionDock::clear() {
  ++generation_;
  analysis_.reset();
  cursorTime_.reset();
  analyse_->setEnabled(true);
  fillTracks();
  status_->setText(tr("Play or step through a video with Pose and Pointmap checked, then Analyse"));
}

void MotionDock::setRecordedFrames(std::size_t frames) {
  if (analysis_ || !analyse_->isEnabled()) return;  // the analysis' own line stays
  status_->setText(tr("%1 with people recorded: Analyse for their joint angles").arg(framesText(frames)));
}

void MotionDock::analyse() {
  if (!frames_) return;
  const RecordedFrames frames = frames_();
  const float threshold = keypointThreshold_ ? keypointThreshold_() : kDefaultKeypointThreshold;
  const quint64 generation = ++generation_;
  analyse_->setEnabled(false);
  status_->setText(tr("Analysing %1...").arg(framesText(frames.size())));
  runInBackground(
      *pool_, this,
      [frames, threshold] {
        return std::shared_ptr<const RecordingMotion>(
            std::make_shared<RecordingMotion>(analyseRecording(frames, threshold)));
      },
      [this, generation](std::shared_ptr<const RecordingMotion> analysis, const QString& error) {
        if (generation != generation_) return;
        onAnalysed(std::move(analysis), error);
      });
}

void MotionDock::onAnalysed(std::shared_ptr<const RecordingMotion> analysis, const QString& error) {
  analyse_->setEnabled(true);
  analysis_ = error.isEmpty() ? std::move(analysis) : nullptr;
  fillTracks();
  if (!error.isEmpty()) {
    logger().warn("motion: {}", error.toStdString());
    status_->setText(error);
  }
  Q_EMIT analysed(error);
}

void MotionDock::fillTracks() {
  const QVariant previous = track_->currentData();
  QSignalBlocker block(track_);
  track_->clear();
  if (analysis_) {
    for (int id : analysis_->trackIds) track_->addItem(tr("Person #%1").arg(id), id);
    const int kept = track_->findData(previous);
    // The first person who has a motion, unless the one chosen before is still there.
    int chosen = kept;
    for (int i = 0; chosen < 0 && i < track_->count(); ++i)
      if (analysis_->motions.count(track_->itemData(i).toInt())) chosen = i;
    track_->setCurrentIndex(std::max(chosen, 0));
  }
  fillAngles();
}

const motion::TrackMotion* MotionDock::chosenMotion() const {
  if (!analysis_ || track_->currentIndex() < 0) return nullptr;
  const auto it = analysis_->motions.find(track_->currentData().toInt());
  return it == analysis_->motions.end() ? nullptr : &it->second;
}

void MotionDock::fillAngles() {
  const QString previous = angle_->currentText();
  QSignalBlocker block(angle_);
  angle_->clear();
  if (const motion::TrackMotion* motion = chosenMotion()) {
    const motion::AngleTable& table = motion->filteredAngles;
    int firstWithValues = -1;
    for (std::size_t a = 0; a < table.names.size(); ++a) {
      angle_->addItem(QString::fromStdString(table.names[a]));
      if (firstWithValues < 0 && hasValue(table, a)) firstWithValues = int(a);
    }
    const int kept = angle_->findText(previous);
    angle_->setCurrentIndex(kept >= 0 ? kept : std::max(firstWithValues, 0));
  }
  showAngle();
}

void MotionDock::showAngle() {
  chart_->removeAllSeries();
  cursor_ = nullptr;
  const motion::TrackMotion* motion = chosenMotion();
  savePng_->setEnabled(motion != nullptr);
  if (!motion) {
    if (analysis_ && track_->currentIndex() >= 0) {
      const auto error = analysis_->errors.find(track_->currentData().toInt());
      if (error != analysis_->errors.end()) status_->setText(QString::fromStdString(error->second));
    }
    return;
  }
  const auto column = std::size_t(std::max(angle_->currentIndex(), 0));
  double low = std::numeric_limits<double>::infinity(), high = -low;
  const auto addRuns = [&](const motion::AngleTable& table, const QString& name, const QPen& pen) {
    if (column >= table.names.size()) return;
    bool first = true;
    for (const QList<QPointF>& run : finiteRuns(table, column)) {
      auto* series = new QLineSeries;
      series->setName(name);
      series->setPen(pen);
      series->replace(run);
      for (const QPointF& p : run) low = std::min(low, p.y()), high = std::max(high, p.y());
      chart_->addSeries(series);
      series->attachAxis(timeAxis_);
      series->attachAxis(degreesAxis_);
      // One legend entry per curve, not per run.
      if (!first) chart_->legend()->markers(series).first()->setVisible(false);
      first = false;
    }
  };
  addRuns(motion->rawAngles, QStringLiteral("raw"), QPen(kRawColor, 1.5));
  addRuns(motion->filteredAngles, QStringLiteral("filtered"), QPen(kFilteredColor, 2.0));
  const std::vector<double>& seconds = motion->filteredAngles.times.seconds;
  timeAxis_->setRange(seconds.front(), std::max(seconds.back(), seconds.front() + 1e-3));
  if (!std::isfinite(low)) low = 0, high = 1;
  const double margin = std::max(0.05 * (high - low), 0.5);
  degreesAxis_->setRange(low - margin, high + margin);
  chart_->setTitle(tr("Person #%1: %2").arg(motion->trackId).arg(angle_->currentText()));
  status_->setText(tr("Person #%1: %2 samples over %3 s at %4 Hz, %5 gap-free segment(s)")
                       .arg(motion->trackId)
                       .arg(seconds.size())
                       .arg(seconds.back() - seconds.front(), 0, 'f', 2)
                       .arg(motion->frameRateHz, 0, 'f', 1)
                       .arg(motion->segmentStatistics.count));
  cursor_ = new QLineSeries;
  cursor_->setName(QStringLiteral("cursor"));
  cursor_->setPen(QPen(kCursorColor, 1.0, Qt::DashLine));
  chart_->addSeries(cursor_);
  cursor_->attachAxis(timeAxis_);
  cursor_->attachAxis(degreesAxis_);
  chart_->legend()->markers(cursor_).first()->setVisible(false);
  drawCursor();
}

void MotionDock::showTime(double seconds) {
  cursorTime_ = seconds;
  drawCursor();
}

void MotionDock::drawCursor() {
  if (!cursor_) return;
  if (!cursorTime_) return cursor_->clear();
  cursor_->replace(QList<QPointF>{{*cursorTime_, degreesAxis_->min()}, {*cursorTime_, degreesAxis_->max()}});
}

bool MotionDock::eventFilter(QObject* watched, QEvent* event) {
  if (watched == chartView_->viewport() && event->type() == QEvent::MouseButtonPress) {
    const auto* mouse = static_cast<QMouseEvent*>(event);
    if (mouse->button() == Qt::LeftButton) seekToNearestSample(mouse->position());
  }
  return QWidget::eventFilter(watched, event);
}

void MotionDock::seekToNearestSample(const QPointF& viewPosition) {
  const motion::TrackMotion* motion = chosenMotion();
  if (!motion || !cursor_) return;
  const QPointF inChart = chart_->mapFromScene(chartView_->mapToScene(viewPosition.toPoint()));
  if (!chart_->plotArea().contains(inChart)) return;
  const double seconds = chart_->mapToValue(inChart, cursor_).x();
  const motion::SampleTimes& times = motion->filteredAngles.times;
  std::size_t nearest = 0;
  for (std::size_t r = 1; r < times.size(); ++r)
    if (std::abs(times.seconds[r] - seconds) < std::abs(times.seconds[nearest] - seconds)) nearest = r;
  Q_EMIT seekRequested(qint64(times.frames[nearest]));
}

void MotionDock::chooseSavePath() {
  const motion::TrackMotion* motion = chosenMotion();
  const QString suggested = QStringLiteral("%1/person%2.%3.png")
                                .arg(dialogDirectory())
                                .arg(motion ? motion->trackId : 0)
                                .arg(angle_->currentText());
  auto* dialog = new QFileDialog(window(), tr("Save Motion Chart"), suggested, tr("PNG pictures (*.png)"));
  dialog->setObjectName(QStringLiteral("motionSaveDialog"));
  dialog->setAcceptMode(QFileDialog::AcceptSave);
  dialog->setOption(QFileDialog::DontUseNativeDialog);
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->selectFile(suggested);
  connect(dialog, &QFileDialog::fileSelected, this, [this](const QString& path) {
    rememberDialogDirectory(path);
    savePng(path);
  });
  dialog->open();
}

void MotionDock::savePng(const QString& path) {
  const QImage picture = chartView_->grab().toImage();
  runInBackground(
      *pool_, this,
      [picture, path] {
        if (!picture.save(path, "PNG")) throw std::runtime_error("could not write " + path.toStdString());
        return true;
      },
      [this, path](bool, const QString& error) {
        if (!error.isEmpty()) {
          logger().error("motion chart: {}", error.toStdString());
          status_->setText(error);
        }
        Q_EMIT pngSaved(path, error);
      });
}

}  // namespace sapiens::studio
