// The fine-tuning panel's Labels tab on its own, over label sets written on disk: the frame list (with
// the explicit splits), the frame shown on the canvas, the autosave a moment after an edit and at once
// when the frame changes, the class list, the keypoint tools of a pose set and their group filters, a
// dense set read-only, a frame that cannot be read reported, and the requests of its buttons.

#include "label_canvas.h"
#include "label_editor_tab.h"

#include "sapiens/common/log.h"
#include "sapiens/finetune/frame_labels.h"
#include "sapiens/finetune/label_set.h"

#include <opencv2/core.hpp>

#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUndoStack>

using sapiens::studio::LabelEditorTab;

namespace {

constexpr int kTimeoutMs = 20000;

template <typename T>
T* child(QObject* parent, const char* name) {
  T* found = parent->findChild<T*>(QString::fromLatin1(name));
  if (!found) qWarning("no child %s", name);
  return found;
}

cv::Mat picture(int width, int height) {
  cv::Mat image(height, width, CV_8UC3);
  cv::randu(image, 0, 255);
  return image;
}

// Two seg frames (class 1 and class 2 everywhere), the second held out.
sapiens::LabelSet segSet(const QString& folder) {
  sapiens::LabelSet labels;
  labels.folder = folder.toStdString();
  labels.task = sapiens::Task::Seg;
  for (int i = 0; i < 2; ++i) {
    sapiens::FrameLabels frame;
    frame.image = picture(64, 48);
    frame.mask = cv::Mat(48, 64, CV_8UC1, cv::Scalar(i + 1));
    sapiens::addFrame(labels, "frame" + std::to_string(i), frame,
                      i == 1 ? sapiens::FrameSplit::Validation : sapiens::FrameSplit::Auto);
  }
  return labels;
}

}  // namespace

class TestLabelEditorTab : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    sapiens::log::Options options;
    options.file = false;
    sapiens::log::init(options);
  }

  void segFramesAreShownEditedAndSaved() {
    QTemporaryDir dir;
    sapiens::LabelSet labels = segSet(dir.filePath(QStringLiteral("seg")));
    LabelEditorTab tab;
    tab.resize(800, 600);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    tab.setAutosaveDelay(100);
    QCOMPARE(child<QLabel>(&tab, "fineTuneSetLabel")->text(), QStringLiteral("No label set"));
    tab.setLabelSet(&labels);
    QVERIFY(child<QLabel>(&tab, "fineTuneSetLabel")->text().startsWith(QStringLiteral("seg label set: ")));

    auto* frames = child<QListWidget>(&tab, "fineTuneFrames");
    QCOMPARE(frames->count(), 2);
    QCOMPARE(frames->item(0)->text(), QStringLiteral("frame0"));
    QCOMPARE(frames->item(1)->text(), QStringLiteral("frame1 (val)"));
    QTRY_COMPARE(tab.currentFrame(), 0);  // read off the GUI thread
    QCOMPARE(frames->currentRow(), 0);
    sapiens::widgets::LabelCanvas* canvas = tab.canvas();
    QCOMPARE(canvas->mode(), sapiens::widgets::LabelCanvas::Mode::Seg);
    QCOMPARE(cv::countNonZero(canvas->mask() == 1), 64 * 48);
    auto* classes = child<QListWidget>(&tab, "fineTuneClasses");
    QCOMPARE(classes->count(), 29);  // seg29, the set naming no classes
    QCOMPARE(classes->currentRow(), 1);
    QVERIFY(classes->isVisible());
    classes->item(3)->setCheckState(Qt::Unchecked);
    QVERIFY(!canvas->classVisible(3));

    // Choosing a frame in the list shows it.
    frames->setCurrentRow(1);
    QTRY_COMPARE(tab.currentFrame(), 1);
    QCOMPARE(cv::countNonZero(canvas->mask() == 2), 64 * 48);
    QVERIFY(!canvas->classVisible(3));  // the ticks hold for every frame

    // An edit is saved a moment after it.
    QSignalSpy autosaved(&tab, &LabelEditorTab::autosaved);
    classes->setCurrentRow(5);
    canvas->fillAt({10, 10});
    QCOMPARE(cv::countNonZero(canvas->mask() == 5), 64 * 48);
    QVERIFY(autosaved.wait(kTimeoutMs));
    QCOMPARE(autosaved.first().at(0).toInt(), 1);
    QCOMPARE(cv::countNonZero(sapiens::readFrameLabels(labels, 1).mask == 5), 64 * 48);

    // And when the frame changes, before the next frame is read (off the GUI thread, in order); undo then
    // edits the frame on show only.
    tab.setAutosaveDelay(60000);
    autosaved.clear();
    canvas->undoStack()->undo();
    tab.selectFrame(0);
    QTRY_COMPARE(tab.currentFrame(), 0);
    QCOMPARE(autosaved.size(), 1);
    QCOMPARE(cv::countNonZero(sapiens::readFrameLabels(labels, 1).mask == 2), 64 * 48);
    QCOMPARE(canvas->undoStack()->count(), 0);
    QVERIFY(tab.saveNow());  // nothing pending
    QCOMPARE(autosaved.size(), 1);

    // A frame added to the set appears with refreshFrames().
    sapiens::FrameLabels extra;
    extra.image = picture(32, 32);
    extra.mask = cv::Mat(32, 32, CV_8UC1, cv::Scalar(sapiens::kIgnoreLabel));
    sapiens::addFrame(labels, "extra", extra);
    tab.refreshFrames();
    QCOMPARE(frames->count(), 3);
    QCOMPARE(frames->currentRow(), 0);
    tab.selectFrame(2);
    QTRY_COMPARE(canvas->mask().cols, 32);

    tab.setLabelSet(nullptr);
    QCOMPARE(frames->count(), 0);
    QCOMPARE(canvas->mode(), sapiens::widgets::LabelCanvas::Mode::Empty);
    QCOMPARE(child<QLabel>(&tab, "fineTuneSetLabel")->text(), QStringLiteral("No label set"));
  }

  void aFrameThatCannotBeReadIsReported() {
    QTemporaryDir dir;
    sapiens::LabelSet labels = segSet(dir.filePath(QStringLiteral("seg")));
    QVERIFY(QFile::remove(QString::fromStdString(labels.resolve(labels.frames[1].mask))));
    LabelEditorTab tab;
    QSignalSpy messages(&tab, &LabelEditorTab::messageShown);
    tab.setLabelSet(&labels);
    tab.selectFrame(1);
    QTRY_COMPARE(messages.size(), 1);
    QVERIFY2(messages.first().at(0).toString().contains(QStringLiteral("frame1")),
             qPrintable(messages.first().at(0).toString()));
    QVERIFY(messages.first().at(1).toBool());
    QCOMPARE(tab.currentFrame(), -1);
    QCOMPARE(tab.canvas()->mode(), sapiens::widgets::LabelCanvas::Mode::Empty);
  }

  void poseSetsGetTheKeypointTools() {
    QTemporaryDir dir;
    sapiens::LabelSet labels;
    labels.folder = dir.filePath(QStringLiteral("pose")).toStdString();
    labels.task = sapiens::Task::Pose;
    sapiens::FrameLabels frame;
    frame.image = picture(64, 64);
    sapiens::addFrame(labels, "person", frame);
    LabelEditorTab tab;
    tab.resize(800, 600);
    tab.show();
    QVERIFY(QTest::qWaitForWindowExposed(&tab));
    tab.setLabelSet(&labels);
    QTRY_COMPARE(tab.canvas()->mode(), sapiens::widgets::LabelCanvas::Mode::Keypoints);
    auto* keypoint = child<QComboBox>(&tab, "fineTuneKeypoint");
    QVERIFY(keypoint->isVisible());
    QVERIFY(!child<QListWidget>(&tab, "fineTuneClasses")->isVisible());
    // The body group alone at first; the face adds its keypoints to the list and the canvas.
    const int body = keypoint->count();
    QVERIFY2(body > 10 && body < 308, qPrintable(QString::number(body)));
    QCOMPARE(keypoint->itemText(0), QStringLiteral("nose"));
    QVERIFY(tab.canvas()->keypointShown(0));
    child<QCheckBox>(&tab, "fineTuneGroupFace")->setChecked(true);
    QVERIFY(keypoint->count() > body);
    child<QCheckBox>(&tab, "fineTuneGroupBody")->setChecked(false);
    QVERIFY(!tab.canvas()->keypointShown(0));

    // Placing a keypoint is an edit that reaches the keypoints file.
    QSignalSpy autosaved(&tab, &LabelEditorTab::autosaved);
    tab.setAutosaveDelay(50);
    const int face = keypoint->itemData(0).toInt();
    tab.canvas()->placeKeypoint(face, {20, 30}, 2);
    QVERIFY(autosaved.wait(kTimeoutMs));
    const sapiens::FrameLabels saved = sapiens::readFrameLabels(labels, 0);
    QCOMPARE(saved.people.size(), std::size_t(1));
    QCOMPARE(saved.people[0].keypoints[std::size_t(face)].visibility, 2);
  }

  void denseSetsAreReadOnly() {
    QTemporaryDir dir;
    sapiens::LabelSet labels;
    labels.folder = dir.filePath(QStringLiteral("normal")).toStdString();
    labels.task = sapiens::Task::Normal;
    sapiens::FrameLabels frame;
    frame.image = picture(32, 24);
    frame.target = cv::Mat(24, 32, CV_32FC3, cv::Scalar(0, 0, -1));
    sapiens::addFrame(labels, "n", frame);
    LabelEditorTab tab;
    tab.setLabelSet(&labels);
    QTRY_COMPARE(tab.canvas()->mode(), sapiens::widgets::LabelCanvas::Mode::ReadOnly);
    auto* pages = tab.findChild<QStackedWidget*>();
    QVERIFY(pages);
    auto* page = qobject_cast<QLabel*>(pages->currentWidget());
    QVERIFY(page && page->text().contains(QStringLiteral("imported, not drawn")));
    QVERIFY(tab.saveNow());
  }

  void addPictureAsksThePanel() {
    LabelEditorTab tab;
    auto* add = child<QPushButton>(&tab, "fineTuneAddPicture");
    QVERIFY(!add->isEnabled());
    tab.setCanAddPicture(true);
    QVERIFY(add->isEnabled());
    QSignalSpy requested(&tab, &LabelEditorTab::addPictureRequested);
    QTest::mouseClick(add, Qt::LeftButton);
    QCOMPARE(requested.size(), 1);
    QCOMPARE(requested.takeFirst().at(0).toBool(), true);  // "start from prediction" is on by default
    child<QCheckBox>(&tab, "fineTuneFromPrediction")->setChecked(false);
    QTest::mouseClick(add, Qt::LeftButton);
    QCOMPARE(requested.takeFirst().at(0).toBool(), false);
    tab.setCanAddPicture(false);
    QVERIFY(!add->isEnabled());
  }
};

QTEST_MAIN(TestLabelEditorTab)
#include "test_label_editor_tab.moc"
