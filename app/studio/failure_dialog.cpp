#include "failure_dialog.h"

#include <QDir>
#include <QMessageBox>
#include <QWidget>

namespace sapiens::studio {

void showFailure(QWidget* parent, const QString& what, const QString& file, const QString& cause) {
  const QString text =
      file.isEmpty() ? what : QStringLiteral("%1\n%2").arg(what, QDir::toNativeSeparators(file));
  QWidget* window = parent ? parent->window() : nullptr;
  auto* shown = window ? window->findChild<QMessageBox*>(QStringLiteral("failureDialog")) : nullptr;
  if (shown && shown->isVisible()) {
    shown->setInformativeText(shown->informativeText() + QStringLiteral("\n\n") + text +
                              QStringLiteral(": ") + cause);
    return;
  }
  auto* box = new QMessageBox(QMessageBox::Critical, what, text, QMessageBox::Ok, window);
  box->setObjectName(QStringLiteral("failureDialog"));
  box->setInformativeText(cause);
  box->setTextInteractionFlags(Qt::TextSelectableByMouse);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
}

}  // namespace sapiens::studio
