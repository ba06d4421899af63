#pragma once
// The network input size, and its one spelling for users: "HxW" (e.g. "1024x768").

#include <optional>
#include <string_view>

namespace sapiens {

/// Network input size in pixels. The released models are all run at 768 x 1024 (W x H); smaller models
/// (e.g. the golden test ones) use other sizes, so every function takes it as a parameter.
struct InputSize {
  int width = 768;
  int height = 1024;

  bool operator==(const InputSize& other) const { return width == other.width && height == other.height; }
  bool operator!=(const InputSize& other) const { return !(*this == other); }
};

/// "1024x768" (or "1024X768", spaces around the parts allowed) -> {width 768, height 1024}; std::nullopt
/// unless both sides are positive multiples of 16 (the backbone's patch size).
std::optional<InputSize> parseInputSize(std::string_view text);

/// What parseInputSize accepts, for error messages: "HxW with multiples of 16, e.g. 1024x768".
inline constexpr std::string_view kInputSizeSyntax = "HxW with multiples of 16, e.g. 1024x768";

}  // namespace sapiens
