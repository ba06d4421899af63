#include "picture_frame.h"

#include "task_set.h"

#include "sapiens/finetune/prediction_labels.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <utility>

namespace sapiens::studio {

namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("PictureFrame", text);
}

}  // namespace

PictureFrame pictureFrame(const LabelSet& labels, const cv::Mat& picture, const FrameResult* result,
                          bool fromPrediction) {
  PredictionLabels made = labelsFromPrediction(labels, picture, result, fromPrediction);
  PictureFrame out;
  out.frame = std::move(made.frame);
  const QString task = taskLabel(labels.task);
  switch (made.use) {
    case PredictionUse::Used:
    case PredictionUse::NotAsked:
      break;
    case PredictionUse::NoPrediction:
      out.note = tr(" (no %1 result for this picture: starting from empty labels)").arg(task);
      break;
    case PredictionUse::ClassesDoNotFit:
      out.note = tr(" (the prediction's classes do not fit the set's: starting from empty labels)");
      break;
    case PredictionUse::DenseNeedsResult:
      out.note = tr("Dense targets are imported, not drawn: a %1 frame can only be added from the model's "
                    "result on the picture")
                     .arg(task);
      break;
    case PredictionUse::NoHead:
      out.note = tr("A label set needs a task with a head");
      break;
  }
  return out;
}

QString newFrameName(const LabelSet& labels, const QString& path) {
  // A video or camera frame is "source#frameN".
  QString stem = QFileInfo(path.section(QLatin1Char('#'), 0, 0)).completeBaseName();
  if (path.contains(QLatin1Char('#'))) stem += QLatin1Char('_') + path.section(QLatin1Char('#'), 1);
  stem.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9_.-]")), QStringLiteral("_"));
  if (stem.isEmpty()) stem = QStringLiteral("frame");
  const QDir folder(QString::fromStdString(labels.folder));
  auto taken = [&](const QString& name) {
    for (const LabelledFrame& f : labels.frames)
      if (QFileInfo(QString::fromStdString(f.image)).completeBaseName() == name) return true;
    return QFileInfo::exists(folder.filePath(QStringLiteral("images/") + name + ".png"));
  };
  QString name = stem;
  for (int n = 2; taken(name); ++n) name = QStringLiteral("%1_%2").arg(stem).arg(n);
  return name;
}

}  // namespace sapiens::studio
