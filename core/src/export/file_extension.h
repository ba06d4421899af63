#pragma once

#include <string>

namespace sapiens {

/// ".png" for "out/Frame.PNG"; empty when the file name has no extension.
std::string lowerExtension(const std::string& path);

}  // namespace sapiens
