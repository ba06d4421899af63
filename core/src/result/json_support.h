#pragma once
// Reading and writing the JSON files of export/: a cursor that names the key path of anything missing
// or mistyped, and float values written as their shortest decimal form.

#include "sapiens/result/rgb.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace sapiens::json_support {

/// Parses a whole file; throws ExportError naming it when it cannot be read or is not JSON.
nlohmann::json parseFile(const std::string& path);

/// A value inside a parsed file, with its key path ("frames[2].instances[0].bbox") for error messages.
class Cursor {
 public:
  Cursor(const std::string& file, const nlohmann::json& value, std::string where = {})
      : file_(&file), value_(&value), where_(std::move(where)) {}

  /// The member `key` of this object; fails when this is no object or it has no such member.
  Cursor operator[](const char* key) const;
  /// The member `key`, or nothing when it is absent or null.
  std::optional<Cursor> optional(const char* key) const;
  /// Element `index` of this array.
  Cursor operator[](std::size_t index) const;
  /// The same for int literals (`cursor[0]` would otherwise be ambiguous with the key overload).
  Cursor operator[](int index) const { return (*this)[static_cast<std::size_t>(index)]; }

  /// The number of elements; fails unless this is an array (of exactly `expected` elements when given).
  std::size_t arraySize(std::optional<std::size_t> expected = std::nullopt) const;
  bool isNull() const { return value_->is_null(); }
  double number() const;
  std::int64_t integer() const;
  std::string string() const;

  [[noreturn]] void fail(const std::string& reason) const;

 private:
  std::string child(const std::string& key) const;

  const std::string* file_;
  const nlohmann::json* value_;
  std::string where_;
};

/// An [r, g, b] array of integers 0..255.
Rgb readRgb(const Cursor& cursor);

/// The double whose shortest decimal form is the float's shortest decimal form (0.1f -> 0.1, not
/// 0.10000000149011612), so JSON files show what the float holds and read back as the same float.
/// Non-finite values become null.
nlohmann::json shortestNumber(float value);
/// Doubles as they are; non-finite ones become null.
nlohmann::json finiteNumber(double value);

}  // namespace sapiens::json_support
