#include "status_readouts.h"

#include "image_view.h"
#include "result_layers.h"

#include <QLabel>
#include <QStatusBar>
#include <QStringList>

namespace sapiens::studio {
namespace {

QLabel* namedLabel(const char* name) {
  auto* label = new QLabel;
  label->setObjectName(QLatin1String(name));
  return label;
}

}  // namespace

QString resultProblems(const FrameResult& result) {
  QStringList problems;
  for (const auto& [task, reason] : result.taskErrors)
    problems << QObject::tr("%1 failed: %2").arg(taskLabel(task), QString::fromStdString(reason));
  for (const auto& [task, warning] : result.warnings) problems << QString::fromStdString(warning);
  return problems.join(QStringLiteral("; "));
}

StatusReadouts::StatusReadouts(QStatusBar* bar, widgets::ImageView* view, const ResultLayers* layers,
                               QLabel* modelLabel, QLabel* rateLabel, QLabel* deviceLabel)
    : QObject(bar),
      readout_(namedLabel("readoutLabel")),
      hover_(namedLabel("hoverLabel")),
      size_(namedLabel("sizeLabel")),
      zoom_(namedLabel("zoomLabel")),
      latency_(namedLabel("latencyLabel")) {
  hover_->setMinimumWidth(
      hover_->fontMetrics().horizontalAdvance(QStringLiteral("x 00000  y 00000   B 255  G 255  R 255")));
  for (QLabel* label : {readout_, hover_, size_, zoom_, modelLabel, latency_, rateLabel, deviceLabel})
    bar->addPermanentWidget(label);

  connect(view, &widgets::ImageView::zoomChanged, this,
          [this](double zoom) { zoom_->setText(QStringLiteral("%1%").arg(zoom * 100.0, 0, 'f', 0)); });
  connect(view, &widgets::ImageView::pixelHovered, this,
          [this, layers](const QPoint& pixel, const QColor& color) {
            hover_->setText(tr("x %1  y %2   B %3  G %4  R %5")
                                .arg(pixel.x())
                                .arg(pixel.y())
                                .arg(color.blue())
                                .arg(color.green())
                                .arg(color.red()));
            readout_->setText(layers->describe(pixel));
          });
  connect(view, &widgets::ImageView::hoverLeft, hover_, &QLabel::clear);
  connect(view, &widgets::ImageView::hoverLeft, readout_, &QLabel::clear);
}

void StatusReadouts::showPictureSize(int width, int height) {
  size_->setText(QStringLiteral("%1 x %2").arg(width).arg(height));
}

QString StatusReadouts::showRunTime(TaskSet tasks, const FrameResult& result, double wallMs, bool fromCache) {
  QStringList perTask;
  for (Task task : headTasksInRunOrder()) {
    if (!contains(tasks, task)) continue;
    const auto ms = result.inferenceMs.find(task);
    if (ms != result.inferenceMs.end())
      perTask << QStringLiteral("%1 %2 ms").arg(taskLabel(task)).arg(ms->second, 0, 'f', 0);
  }
  latency_->setText(fromCache ? tr("cached") : tr("%1 ms").arg(wallMs, 0, 'f', 0));
  latency_->setToolTip(perTask.join(QStringLiteral(", ")));
  return perTask.join(QStringLiteral(", "));
}

}  // namespace sapiens::studio
