#pragma once
// PNG chunks at the byte level, for tests that build or inspect PNG files themselves: CRC-32 (written
// here, independently of the exporter's), big-endian lengths, whole chunks.

#include <QByteArray>

#include <array>
#include <cstdint>

namespace sapiens::test::png {

inline std::uint32_t crc32(const QByteArray& bytes) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xFFFFFFFFu;
  for (const char byte : bytes) c = table[(c ^ static_cast<unsigned char>(byte)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

inline QByteArray bigEndian32(std::uint32_t value) {
  QByteArray bytes(4, 0);
  for (int i = 0; i < 4; ++i) bytes[i] = char((value >> (24 - 8 * i)) & 0xFF);
  return bytes;
}

inline std::uint32_t readBigEndian32(const QByteArray& bytes, qsizetype at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

// One PNG chunk: length, type, data, CRC over type + data.
inline QByteArray chunk(const char* type, const QByteArray& data) {
  const QByteArray body = QByteArray(type, 4) + data;
  return bigEndian32(std::uint32_t(data.size())) + body + bigEndian32(crc32(body));
}

}  // namespace sapiens::test::png
