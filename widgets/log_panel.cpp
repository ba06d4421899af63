#include "log_panel.h"

#include <QContextMenuEvent>
#include <QFontDatabase>
#include <QMenu>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCharFormat>
#include <QTime>

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

namespace sapiens::widgets {

// Shared with the log callback, which may still be running on another thread while the panel is
// destroyed: the panel detaches itself under the lock, so nothing is posted to a dead object.
struct LogPanel::Inbox {
  struct Entry {
    log::Level level;
    QString text;
  };
  std::mutex mutex;
  std::vector<Entry> pending;
  bool drainScheduled = false;
  LogPanel* panel = nullptr;
};

namespace {

QColor levelColor(log::Level level, const QPalette& palette) {
  switch (level) {
    case log::Level::Error:
      return QColor(220, 60, 60);
    case log::Level::Warn:
      return QColor(215, 145, 30);
    case log::Level::Debug:
    case log::Level::Trace:
      return palette.color(QPalette::Disabled, QPalette::Text);
    default:
      return palette.color(QPalette::Text);
  }
}

}  // namespace

LogPanel::LogPanel(QWidget* parent, int maxLines)
    : QPlainTextEdit(parent), inbox_(std::make_shared<Inbox>()) {
  setReadOnly(true);
  setAccessibleName(tr("Log"));
  setMaximumBlockCount(maxLines);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  setObjectName(QStringLiteral("logPanel"));

  inbox_->panel = this;
  callbackId_ = log::addCallback([inbox = inbox_](log::Level level, std::string_view message) {
    const QString line = QTime::currentTime().toString(QStringLiteral("HH:mm:ss  ")) +
                         QString::fromLatin1(log::levelName(level).data(), int(log::levelName(level).size()))
                             .leftJustified(8) +
                         QString::fromUtf8(message.data(), int(message.size()));
    std::lock_guard<std::mutex> lock(inbox->mutex);
    inbox->pending.push_back({level, line});
    if (inbox->panel && !inbox->drainScheduled) {
      inbox->drainScheduled = true;
      LogPanel* panel = inbox->panel;
      QMetaObject::invokeMethod(
          panel, [panel] { panel->drainInbox(); }, Qt::QueuedConnection);
    }
  });
}

LogPanel::~LogPanel() {
  log::removeCallback(callbackId_);
  std::lock_guard<std::mutex> lock(inbox_->mutex);
  inbox_->panel = nullptr;
}

void LogPanel::drainInbox() {
  std::vector<Inbox::Entry> entries;
  {
    std::lock_guard<std::mutex> lock(inbox_->mutex);
    entries.swap(inbox_->pending);
    inbox_->drainScheduled = false;
  }
  // Only the last maxLines entries survive anyway.
  const std::size_t keep = std::size_t(std::max(1, maximumBlockCount()));
  const std::size_t first = entries.size() > keep ? entries.size() - keep : 0;
  for (std::size_t i = first; i < entries.size(); ++i) appendMessage(entries[i].level, entries[i].text);
}

void LogPanel::appendMessage(log::Level level, const QString& message) {
  QScrollBar* bar = verticalScrollBar();
  const bool followTail = bar->value() == bar->maximum();
  QTextCharFormat format;
  format.setForeground(levelColor(level, palette()));
  QTextCursor cursor(document());
  cursor.movePosition(QTextCursor::End);
  if (!document()->isEmpty()) cursor.insertBlock();
  cursor.insertText(message, format);
  if (followTail) bar->setValue(bar->maximum());
}

void LogPanel::contextMenuEvent(QContextMenuEvent* event) {
  std::unique_ptr<QMenu> menu(createStandardContextMenu(event->pos()));
  menu->addSeparator();
  menu->addAction(tr("Clear"), this, &QPlainTextEdit::clear);
  menu->exec(event->globalPos());
}

}  // namespace sapiens::widgets
