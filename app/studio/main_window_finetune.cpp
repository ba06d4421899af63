// MainWindow's Fine-tuning dock, kept apart from main_window.cpp: the panel gets the picture on display
// (an image, or a video or camera frame), its results and the task models the window knows of.

#include "finetune_panel.h"
#include "inference_session.h"
#include "main_window.h"
#include "result_layers.h"

#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>

namespace sapiens::studio {

void MainWindow::createFineTuningDock() {
  fineTunePanel_ = new FineTunePanel;
  fineTuneDock_ = addDock(tr("Fine-tuning"), "fineTuningDock", fineTunePanel_, Qt::RightDockWidgetArea);
  fineTuneDock_->hide();  // until View > Fine-tuning (a saved layout may show it)

  QAction* toggle = fineTuneDock_->toggleViewAction();
  toggle->setObjectName(QStringLiteral("actionToggle") + fineTuneDock_->objectName());
  toggle->setShortcut(QKeySequence(tr("Ctrl+Shift+F")));
  if (auto* view = menuBar()->findChild<QMenu*>(QStringLiteral("viewMenu"))) {
    // After the other docks' entries.
    QAction* before = nullptr;
    const QList<QAction*> actions = view->actions();
    for (int i = 0; i + 1 < actions.size(); ++i) {
      if (actions[i]->objectName() == QLatin1String("actionTogglelogDock")) before = actions[i + 1];
    }
    view->insertAction(before, toggle);
  }

  fineTunePanel_->setModelLookup([this](Task task) {
    const auto& models = inference_->models();
    const auto it = models.find(task);
    return it == models.end() ? QString() : it->second.path;
  });
  auto sendPicture = [this](const QString& name) {
    fineTunePanel_->setCurrentPicture(name, layers_->picture());
    fineTunePanel_->setCurrentResult(currentResult());
  };
  connect(this, &MainWindow::imageShown, fineTunePanel_,
          [sendPicture](const QString& path) { sendPicture(path); });
  connect(this, &MainWindow::mediaFrameShown, fineTunePanel_,
          [this, sendPicture] { sendPicture(currentKey_); });
  connect(this, &MainWindow::resultShown, fineTunePanel_,
          [this] { fineTunePanel_->setCurrentResult(currentResult()); });
}

}  // namespace sapiens::studio
