#include "app_icon.h"

namespace sapiens::studio {

QIcon studioIcon() {
  QIcon builtIn;
  for (int size : {16, 24, 32, 48, 64, 128, 256})
    builtIn.addFile(QStringLiteral(":/icons/sapiens-studio-%1.png").arg(size), QSize(size, size));
  return QIcon::fromTheme(QStringLiteral("sapiens-studio"), builtIn);
}

}  // namespace sapiens::studio
