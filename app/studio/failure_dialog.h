#pragma once
// The dialog for a failure that ends what the user asked for (open, run, export, fine-tune, download,
// save labels): what failed, the file, the cause; the log keeps the detail. It does not block: the
// window goes on (downloads, playback) while it is shown. A failure while one is shown is added to it
// rather than stacking a second dialog. Warnings stay in the status bar and the log.

#include <QString>

class QWidget;

namespace sapiens::studio {

/// Shows or extends the failure dialog of `parent`'s window.
void showFailure(QWidget* parent, const QString& what, const QString& file, const QString& cause);

}  // namespace sapiens::studio
