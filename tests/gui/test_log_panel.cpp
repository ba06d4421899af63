// The log dock's panel: messages from any thread end up in it, in colour, capped, and a panel that
// goes away while other threads keep logging takes nothing down with it.

#include "log_panel.h"

#include "sapiens/common/log.h"

#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>

#include <atomic>
#include <thread>
#include <vector>

using sapiens::widgets::LogPanel;

class TestLogPanel : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void initTestCase() {
    sapiens::log::Options options;
    options.file = false;
    options.console = sapiens::log::Level::Off;
    sapiens::log::init(options);
  }

  void showsMessagesFromWorkerThreadsCapped() {
    LogPanel panel(nullptr, 50);
    std::vector<std::thread> workers;
    for (int t = 0; t < 4; ++t) {
      workers.emplace_back([t] {
        for (int i = 0; i < 100; ++i) sapiens::logger().info("worker {} message {}", t, i);
      });
    }
    for (auto& worker : workers) worker.join();
    sapiens::logger().warn("all workers done");
    QTRY_VERIFY(panel.toPlainText().contains(QStringLiteral("all workers done")));
    QCOMPARE(panel.document()->blockCount(), 50);
    const QString last = panel.document()->lastBlock().text();
    QVERIFY2(last.contains(QStringLiteral("warning")) && last.endsWith(QStringLiteral("all workers done")),
             qPrintable(last));
    QVERIFY(!panel.toPlainText().contains(QStringLiteral("message 0\n")));
  }

  void coloursLinesByLevel() {
    LogPanel panel;
    sapiens::logger().info("plain news");
    sapiens::logger().error("something broke in /tmp/x.png");
    QTRY_VERIFY(panel.toPlainText().contains(QStringLiteral("something broke")));
    const QTextBlock info = panel.document()->findBlockByNumber(0);
    const QTextBlock error = panel.document()->findBlockByNumber(1);
    QVERIFY(info.text().contains(QStringLiteral("info")));
    QVERIFY(error.text().contains(QStringLiteral("error")));
    const QColor errorColour = error.begin().fragment().charFormat().foreground().color();
    QVERIFY(errorColour.red() > 180 && errorColour.green() < 100);
    QVERIFY(info.begin().fragment().charFormat().foreground().color() != errorColour);
  }

  void survivesDestructionWhileOthersLog() {
    std::atomic<bool> stop{false};
    std::thread chatter([&stop] {
      int i = 0;
      while (!stop) sapiens::logger().info("chatter {}", i++);
    });
    for (int round = 0; round < 20; ++round) {
      auto* panel = new LogPanel;
      QTest::qWait(5);
      delete panel;
    }
    stop = true;
    chatter.join();
    QCoreApplication::processEvents();  // queued deliveries to deleted panels must be gone
    LogPanel survivor;
    sapiens::logger().info("still fine");
    QTRY_VERIFY(survivor.toPlainText().contains(QStringLiteral("still fine")));
  }
};

QTEST_MAIN(TestLogPanel)
#include "test_log_panel.moc"
