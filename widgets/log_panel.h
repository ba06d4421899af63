#pragma once
// The log dock's content: every message of sapiens::logger() (Debug and above), coloured by level,
// the oldest lines dropped past a cap. Messages may come from any thread; they are batched and
// appended on the GUI thread.

#include "sapiens/common/log.h"

#include <QPlainTextEdit>

#include <memory>

namespace sapiens::widgets {

class LogPanel : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit LogPanel(QWidget* parent = nullptr, int maxLines = 5000);
  ~LogPanel() override;

  /// Appends one line now (GUI thread only). Log messages arrive here through the log callback.
  void appendMessage(log::Level level, const QString& message);

 protected:
  void contextMenuEvent(QContextMenuEvent* event) override;

 private:
  struct Inbox;
  void drainInbox();

  std::shared_ptr<Inbox> inbox_;
  int callbackId_ = -1;
};

}  // namespace sapiens::widgets
