#include "timeline.h"

#include "track_strip.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace sapiens::widgets {
namespace {

QString clockText(double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  const auto centis = static_cast<qint64>(std::llround(seconds * 100));
  const qint64 minutes = centis / 6000;
  const double rest = double(centis % 6000) / 100.0;
  return QStringLiteral("%1:%2").arg(minutes, 2, 10, QLatin1Char('0')).arg(rest, 5, 'f', 2, QLatin1Char('0'));
}

QToolButton* makeButton(QWidget* parent, const QString& name, QStyle::StandardPixmap icon,
                        const QString& tip) {
  auto* button = new QToolButton(parent);
  button->setObjectName(name);
  button->setIcon(parent->style()->standardIcon(icon));
  button->setToolTip(tip);
  button->setAccessibleName(tip);
  button->setAutoRaise(true);
  return button;
}

}  // namespace

Timeline::Timeline(QWidget* parent) : QWidget(parent) {
  back_ = makeButton(this, QStringLiteral("timelineBack"), QStyle::SP_MediaSeekBackward,
                     tr("Previous frame (,)"));
  play_ = makeButton(this, QStringLiteral("timelinePlay"), QStyle::SP_MediaPlay, tr("Play (Space)"));
  forward_ =
      makeButton(this, QStringLiteral("timelineForward"), QStyle::SP_MediaSeekForward, tr("Next frame (.)"));
  loop_ = makeButton(this, QStringLiteral("timelineLoop"), QStyle::SP_BrowserReload, tr("Loop (L)"));
  loop_->setCheckable(true);

  slider_ = new QSlider(Qt::Horizontal, this);
  slider_->setObjectName(QStringLiteral("timelineSlider"));
  slider_->setAccessibleName(tr("Frame position"));
  slider_->setRange(0, 0);
  slider_->setFocusPolicy(Qt::ClickFocus);
  strip_ = new TrackStrip(this);
  strip_->setObjectName(QStringLiteral("timelineTrackStrip"));
  strip_->hide();
  readout_ = new QLabel(this);
  readout_->setObjectName(QStringLiteral("timelineReadout"));
  readout_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 0, 4, 0);
  layout->addWidget(back_);
  layout->addWidget(play_);
  layout->addWidget(forward_);
  layout->addWidget(loop_);
  auto* column = new QVBoxLayout;
  column->setContentsMargins(0, 0, 0, 0);
  column->setSpacing(0);
  column->addWidget(slider_);
  column->addWidget(strip_);
  layout->addLayout(column, 1);
  layout->addWidget(readout_);

  connect(play_, &QToolButton::clicked, this, &Timeline::playPauseRequested);
  connect(back_, &QToolButton::clicked, this, [this] { Q_EMIT stepRequested(-1); });
  connect(forward_, &QToolButton::clicked, this, [this] { Q_EMIT stepRequested(1); });
  connect(loop_, &QToolButton::toggled, this, &Timeline::loopingChanged);
  // setPosition moves the slider with its signals blocked: a change seen here is the user's.
  connect(slider_, &QSlider::valueChanged, this, [this](int value) { Q_EMIT seekRequested(value); });
  connect(strip_, &TrackStrip::frameClicked, this, &Timeline::seekRequested);
  setMedia(-1, 0, false);
}

void Timeline::setMedia(qint64 frameCount, double fps, bool live) {
  frameCount_ = frameCount;
  fps_ = fps;
  live_ = live;
  position_ = 0;
  seconds_ = 0;
  {
    const QSignalBlocker blocker(slider_);
    slider_->setRange(0, int(std::clamp<qint64>(frameCount - 1, 0, INT32_MAX)));
    slider_->setValue(0);
  }
  slider_->setVisible(!live);
  setTrackSpans({}, QColor(), QString());
  updateStripRange();
  back_->setEnabled(!live);
  forward_->setEnabled(!live);
  loop_->setEnabled(!live);
  updateReadout();
}

void Timeline::setPosition(qint64 frame, double seconds) {
  position_ = frame;
  seconds_ = seconds;
  if (!live_ && !slider_->isSliderDown()) {
    const QSignalBlocker blocker(slider_);
    if (frame > slider_->maximum()) {
      slider_->setMaximum(int(std::min<qint64>(frame, INT32_MAX)));
      updateStripRange();
    }
    slider_->setValue(int(std::min<qint64>(frame, INT32_MAX)));
  }
  updateReadout();
}

void Timeline::setPlaying(bool playing) {
  playing_ = playing;
  play_->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  play_->setToolTip(playing ? tr("Pause (Space)") : tr("Play (Space)"));
}

bool Timeline::isLooping() const {
  return loop_->isChecked();
}

void Timeline::setLooping(bool looping) {
  loop_->setChecked(looping);
}

void Timeline::setTrackSpans(const std::vector<TrackSpan>& spans, const QColor& color,
                             const QString& description) {
  strip_->setSpans(spans, color);
  strip_->setToolTip(description);
  strip_->setVisible(!spans.empty() && !live_);
}

const std::vector<TrackSpan>& Timeline::trackSpans() const {
  return strip_->spans();
}

void Timeline::updateStripRange() {
  // Frame f under the slider's handle at f: the handle's centre travels between half its length from
  // either end.
  strip_->setRange(slider_->maximum(), style()->pixelMetric(QStyle::PM_SliderLength, nullptr, slider_) / 2);
}

void Timeline::updateReadout() {
  if (live_) {
    readout_->setText(tr("LIVE  %1  frame %2").arg(clockText(seconds_)).arg(position_ + 1));
    return;
  }
  const double total = frameCount_ > 0 && fps_ > 0 ? double(frameCount_) / fps_ : 0;
  const QString count = frameCount_ > 0 ? QString::number(frameCount_) : QStringLiteral("?");
  readout_->setText(
      tr("%1 / %2  frame %3 / %4").arg(clockText(seconds_), clockText(total)).arg(position_ + 1).arg(count));
}

}  // namespace sapiens::widgets
