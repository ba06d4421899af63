#include "picture_frame.h"

#include "task_set.h"

#include "sapiens/result/keypoint_metadata.h"

#include <opencv2/core.hpp>

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>

namespace sapiens::studio {

namespace {

QString tr(const char* text) {
  return QCoreApplication::translate("PictureFrame", text);
}

}  // namespace

PictureFrame pictureFrame(const LabelSet& labels, const cv::Mat& picture, const FrameResult* result,
                          bool fromPrediction) {
  const Task task = labels.task;
  const std::size_t count = labelCount(labels);
  PictureFrame out;
  FrameLabels frame;
  frame.image = picture;
  const bool havePrediction = fromPrediction && result && result->width == picture.cols &&
                              result->height == picture.rows && result->has(task);
  if (fromPrediction && !havePrediction)
    out.note = tr(" (no %1 result for this picture: starting from empty labels)").arg(taskLabel(task));
  switch (task) {
    case Task::Seg:
      frame.mask = cv::Mat(picture.size(), CV_8UC1, cv::Scalar(kIgnoreLabel));
      if (havePrediction) {
        double maxLabel = 0;
        cv::minMaxLoc(result->segLabels, nullptr, &maxLabel);
        if (maxLabel < double(count))
          frame.mask = result->segLabels.clone();
        else
          out.note = tr(" (the prediction's classes do not fit the set's: starting from empty labels)");
      }
      break;
    case Task::Pose:
      if (havePrediction && count == keypoints308().size()) {
        for (const PoseInstance& pose : result->poses) {
          PersonLabel person;
          person.bbox = pose.bbox;
          person.keypoints.assign(count, KeypointLabel{});
          for (std::size_t k = 0; k < std::min(count, pose.keypoints.size()); ++k) {
            const bool confident = k < pose.scores.size() && pose.scores[k] >= 0.3f;
            if (confident) person.keypoints[k] = {pose.keypoints[k][0], pose.keypoints[k][1], 2};
          }
          frame.people.push_back(std::move(person));
        }
      }
      break;
    case Task::Normal:
    case Task::Albedo:
    case Task::Pointmap:
      if (!havePrediction) {
        out.note = tr("Dense targets are imported, not drawn: a %1 frame can only be added from the model's "
                      "result on the picture")
                       .arg(taskLabel(task));
        return out;
      }
      frame.target = (task == Task::Normal   ? result->normal
                      : task == Task::Albedo ? result->albedo
                                             : result->pointmap)
                         .clone();
      break;
    case Task::Backbone:
      out.note = tr("A label set needs a task with a head");
      return out;
  }
  out.frame = std::move(frame);
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
