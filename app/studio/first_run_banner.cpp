#include "first_run_banner.h"

#include "task_set.h"

#include "sapiens/model/model_zoo.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

namespace sapiens::studio {

FirstRunBanner::FirstRunBanner(QWidget* parent)
    : QFrame(parent),
      text_(new QLabel),
      download_(new QPushButton),
      chooseFolder_(new QPushButton(tr("Choose a &Folder with Checkpoints..."))),
      demo_(new QPushButton(tr("Run the Demo Weights (&untrained)"))) {
  setObjectName(QStringLiteral("firstRunBanner"));
  setAccessibleName(tr("No checkpoints"));
  setFrameShape(QFrame::StyledPanel);
  setAutoFillBackground(true);
  setBackgroundRole(QPalette::ToolTipBase);
  text_->setWordWrap(true);
  text_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  text_->setObjectName(QStringLiteral("firstRunText"));
  download_->setObjectName(QStringLiteral("bannerDownload"));
  chooseFolder_->setObjectName(QStringLiteral("bannerChooseFolder"));
  demo_->setObjectName(QStringLiteral("bannerDemoWeights"));
  demo_->setToolTip(tr("Random weights of the right shape: the outputs are not predictions"));
  auto* buttons = new QHBoxLayout;
  for (QPushButton* b : {download_, chooseFolder_, demo_}) buttons->addWidget(b);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(text_);
  layout->addLayout(buttons);
  connect(download_, &QPushButton::clicked, this, [this] { Q_EMIT downloadRequested(downloadIds_); });
  connect(chooseFolder_, &QPushButton::clicked, this, &FirstRunBanner::chooseFolderRequested);
  connect(demo_, &QPushButton::clicked, this, &FirstRunBanner::demoWeightsRequested);
  hide();
}

void FirstRunBanner::showMissing(const std::vector<Task>& tasks, const QString& root) {
  if (tasks.empty()) {
    hide();
    return;
  }
  QStringList names;
  for (Task task : tasks) names << taskLabel(task);
  text_->setText(tr("<b>No checkpoint for %1</b> in %2. Meta's Sapiens2 models are downloaded once from "
                    "Hugging Face (Models &gt; Manage Models); until then the tasks have no model.")
                     .arg(names.join(QStringLiteral(", ")), root.toHtmlEscaped()));
  downloadIds_.clear();
  std::uint64_t bytes = 0;
  for (const zoo::Entry* e : zoo::starterSet(tasks)) {
    downloadIds_ << QString::fromStdString(e->id);
    bytes += e->dataBytesIfF32;
  }
  const QString files = downloadIds_.size() == 1 ? tr("1 file") : tr("%1 files").arg(downloadIds_.size());
  download_->setText(
      tr("&Download the 0.4b Set (%1, about %2)")
          .arg(files, QLocale().formattedDataSize(static_cast<qint64>(bytes), 1, QLocale::DataSizeSIFormat)));
  download_->setEnabled(!downloadIds_.isEmpty());
  download_->setToolTip(downloadIds_.isEmpty() ? tr("No checkpoint of these tasks has been published")
                                               : downloadIds_.join(QStringLiteral(", ")));
  show();
}

}  // namespace sapiens::studio
