// MainWindow's person boxes drawn by the user, kept apart from main_window.cpp: a box drawn on the picture
// or a person's box deleted runs pose again in the boxes that remain.

#include "inference_session.h"
#include "main_window.h"
#include "playback_controller.h"
#include "result_layers.h"

#include "image_view.h"

#include "sapiens/common/log.h"
#include "sapiens/pipeline/person_boxes.h"

#include <QStatusBar>

#include <exception>

namespace sapiens::studio {

void MainWindow::addPersonBox(const QRectF& imageRect) {
  if (!view_->hasImage() || currentKey_.isEmpty()) return;
  std::vector<BoundingBox> boxes = currentResult() ? poseBoxes(*currentResult()) : std::vector<BoundingBox>();
  try {
    boxes.push_back(drawnBox(imageRect.left(), imageRect.top(), imageRect.right(), imageRect.bottom(),
                             view_->image().cols, view_->image().rows));
  } catch (const std::exception& e) {
    statusBar()->showMessage(QString::fromStdString(e.what()), kStatusMessageMs);
    return;
  }
  const BoundingBox& added = boxes.back();
  logger().info("person box drawn: {:.0f},{:.0f},{:.0f},{:.0f}", added.x1, added.y1, added.x2, added.y2);
  runPoseInBoxes(boxes);
}

void MainWindow::deletePersonBox(int index) {
  const FrameResult* result = currentResult();
  if (!result || index < 0 || index >= int(result->poses.size())) return;
  const std::vector<BoundingBox> boxes = poseBoxes(*result, index);
  if (!boxes.empty()) return runPoseInBoxes(boxes);
  // No box left: nobody to estimate the pose of.
  userBoxes_.clear();
  poseEditPending_ = false;
  inference_->supersede();
  layers_->setPoses({}, std::nullopt);
  updateExportActions();
  statusBar()->showMessage(tr("Removed the last person box"), kStatusMessageMs);
}

void MainWindow::runPoseInBoxes(const std::vector<BoundingBox>& boxes) {
  userBoxes_ = boxes;
  poseEditPending_ = true;
  statusBar()->showMessage(boxes.size() == 1 ? tr("Running pose in 1 person box...")
                                             : tr("Running pose in %1 person boxes...").arg(boxes.size()));
  playback_->dropHeldFrame();
  inference_->request(currentKey_, view_->image(), taskBit(Task::Pose), userBoxes_);
}

}  // namespace sapiens::studio
