#include "result/json_support.h"

#include "sapiens/io/export_error.h"
#include "sapiens/io/file_read.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace sapiens::json_support {

nlohmann::json parseFile(const std::string& path) {
  const std::string text = readWholeFile(path, kMaxJsonFileBytes, "a JSON file");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    throw ExportError(path, std::string("not valid JSON: ") + error.what());
  }
}

std::string Cursor::child(const std::string& key) const {
  return where_.empty() ? key : where_ + "." + key;
}

Cursor Cursor::operator[](const char* key) const {
  if (!value_->is_object()) fail("expected an object");
  const auto found = value_->find(key);
  if (found == value_->end()) fail(std::string("missing key '") + key + "'");
  return Cursor(*file_, *found, child(key));
}

std::optional<Cursor> Cursor::optional(const char* key) const {
  if (!value_->is_object()) fail("expected an object");
  const auto found = value_->find(key);
  if (found == value_->end() || found->is_null()) return std::nullopt;
  return Cursor(*file_, *found, child(key));
}

Cursor Cursor::operator[](std::size_t index) const {
  if (!value_->is_array()) fail("expected an array");
  if (index >= value_->size()) fail("has no element " + std::to_string(index));
  return Cursor(*file_, (*value_)[index], where_ + "[" + std::to_string(index) + "]");
}

std::size_t Cursor::arraySize(std::optional<std::size_t> expected) const {
  if (!value_->is_array()) fail("expected an array");
  if (expected && value_->size() != *expected) {
    fail("expected " + std::to_string(*expected) + " elements, found " + std::to_string(value_->size()));
  }
  return value_->size();
}

double Cursor::number() const {
  if (!value_->is_number()) fail("expected a number");
  return value_->get<double>();
}

std::int64_t Cursor::integer() const {
  if (value_->is_number_integer()) return value_->get<std::int64_t>();
  if (value_->is_number_float()) {
    const double value = value_->get<double>();
    if (std::nearbyint(value) == value && std::abs(value) < 9.0e15) return static_cast<std::int64_t>(value);
  }
  fail("expected an integer");
}

std::string Cursor::string() const {
  if (!value_->is_string()) fail("expected a string");
  return value_->get<std::string>();
}

void Cursor::fail(const std::string& reason) const {
  throw ExportError(*file_, (where_.empty() ? std::string("top level") : where_) + ": " + reason);
}

Rgb readRgb(const Cursor& cursor) {
  cursor.arraySize(3);
  Rgb color{};
  for (std::size_t c = 0; c < 3; ++c) {
    const std::int64_t value = cursor[c].integer();
    if (value < 0 || value > 255) cursor[c].fail("colour component outside 0..255");
    color[c] = static_cast<std::uint8_t>(value);
  }
  return color;
}

nlohmann::json shortestNumber(float value) {
  if (!std::isfinite(value)) return nullptr;
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text - 1, value);
  *result.ptr = '\0';
  return std::strtod(text, nullptr);
}

nlohmann::json finiteNumber(double value) {
  if (!std::isfinite(value)) return nullptr;
  return value;
}

}  // namespace sapiens::json_support
