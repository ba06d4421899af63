#include "sapiens/export/ply.h"

#include "sapiens/export/point_cloud.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <stdexcept>
#include <string>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the binary PLY writer copies floats as they are in memory: little-endian hosts only"
#endif

namespace sapiens {

namespace {

void checkCloud(const PointCloud& cloud) {
  const std::size_t count = cloud.vertexCount();
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument("cannot write a PLY of " + std::to_string(count) + " vertices: " + what);
  };
  if (cloud.positions.size() % 3 != 0)
    fail("positions hold " + std::to_string(cloud.positions.size()) + " floats");
  if (!cloud.normals.empty() && cloud.normals.size() != count * 3) {
    fail("normals hold " + std::to_string(cloud.normals.size()) + " floats");
  }
  if (!cloud.colors.empty() && cloud.colors.size() != count * 3) {
    fail("colours hold " + std::to_string(cloud.colors.size()) + " bytes");
  }
  if (cloud.triangles.size() % 3 != 0)
    fail("triangles hold " + std::to_string(cloud.triangles.size()) + " indices");
  if (count > 0x7fffffffu) fail("more vertices than a PLY int index can address");
  for (std::size_t i = 0; i < cloud.triangles.size(); ++i) {
    if (cloud.triangles[i] >= count) {
      fail("triangle " + std::to_string(i / 3) + " uses vertex " + std::to_string(cloud.triangles[i]));
    }
  }
}

std::string header(const PointCloud& cloud, PlyEncoding encoding, const std::string& note) {
  std::string text = "ply\n";
  text += encoding == PlyEncoding::Ascii ? "format ascii 1.0\n" : "format binary_little_endian 1.0\n";
  text += "comment Sapiens2 Studio: pointmap vertices, camera frame (x right, y down, z forward)\n";
  if (!note.empty()) {
    std::string line = note;
    std::replace(line.begin(), line.end(), '\n', ' ');  // a comment is one header line
    text += "comment " + line + "\n";
  }
  text += "element vertex " + std::to_string(cloud.vertexCount()) + "\n";
  text += "property float x\nproperty float y\nproperty float z\n";
  if (!cloud.normals.empty()) text += "property float nx\nproperty float ny\nproperty float nz\n";
  if (!cloud.colors.empty()) text += "property uchar red\nproperty uchar green\nproperty uchar blue\n";
  if (!cloud.triangles.empty()) {
    text += "element face " + std::to_string(cloud.triangleCount()) + "\n";
    text += "property list uchar int vertex_indices\n";
  }
  text += "end_header\n";
  return text;
}

// Vertices [begin, end) as the binary body has them.
void appendBinaryVertices(std::string& out, const PointCloud& cloud, std::size_t begin, std::size_t end) {
  const bool normals = !cloud.normals.empty();
  const bool colors = !cloud.colors.empty();
  const std::size_t vertexSize = 12 + (normals ? 12 : 0) + (colors ? 3 : 0);
  const std::size_t start = out.size();
  out.resize(start + (end - begin) * vertexSize);
  char* cursor = out.data() + start;
  for (std::size_t i = begin; i < end; ++i) {
    std::memcpy(cursor, &cloud.positions[i * 3], 12);
    cursor += 12;
    if (normals) {
      std::memcpy(cursor, &cloud.normals[i * 3], 12);
      cursor += 12;
    }
    if (colors) {
      std::memcpy(cursor, &cloud.colors[i * 3], 3);
      cursor += 3;
    }
  }
}

void appendBinaryTriangles(std::string& out, const PointCloud& cloud, std::size_t begin, std::size_t end) {
  const std::size_t start = out.size();
  out.resize(start + (end - begin) * 13);
  char* cursor = out.data() + start;
  for (std::size_t t = begin; t < end; ++t) {
    *cursor++ = 3;
    for (int k = 0; k < 3; ++k) {
      const auto index = static_cast<std::int32_t>(cloud.triangles[t * 3 + static_cast<std::size_t>(k)]);
      std::memcpy(cursor, &index, 4);
      cursor += 4;
    }
  }
}

template <typename T>
void appendNumber(std::string& out, T value) {
  char text[32];
  // Shortest text that reads back as the same value (floats included).
  const auto result = std::to_chars(text, text + sizeof text, value);
  out.append(text, result.ptr);
}

void appendAsciiVertices(std::string& out, const PointCloud& cloud, std::size_t begin, std::size_t end) {
  for (std::size_t i = begin; i < end; ++i) {
    for (int k = 0; k < 3; ++k) {
      if (k > 0) out += ' ';
      appendNumber(out, cloud.positions[i * 3 + static_cast<std::size_t>(k)]);
    }
    if (!cloud.normals.empty()) {
      for (int k = 0; k < 3; ++k) {
        out += ' ';
        appendNumber(out, cloud.normals[i * 3 + static_cast<std::size_t>(k)]);
      }
    }
    if (!cloud.colors.empty()) {
      for (int k = 0; k < 3; ++k) {
        out += ' ';
        appendNumber(out, static_cast<unsigned>(cloud.colors[i * 3 + static_cast<std::size_t>(k)]));
      }
    }
    out += '\n';
  }
}

void appendAsciiTriangles(std::string& out, const PointCloud& cloud, std::size_t begin, std::size_t end) {
  for (std::size_t t = begin; t < end; ++t) {
    out += '3';
    for (int k = 0; k < 3; ++k) {
      out += ' ';
      appendNumber(out, cloud.triangles[t * 3 + static_cast<std::size_t>(k)]);
    }
    out += '\n';
  }
}

// The whole file, handed to `emit` a piece of at most kPieceElements vertices or triangles at a time:
// a pointmap at a large picture's size is gigabytes of PLY, never held whole on its way to the disk.
constexpr std::size_t kPieceElements = 1 << 16;

// `cloud` has passed checkCloud.
template <typename Emit>
void encodeInPieces(const PointCloud& cloud, PlyEncoding encoding, const std::string& note, Emit emit) {
  std::string piece = header(cloud, encoding, note);
  const bool ascii = encoding == PlyEncoding::Ascii;
  for (std::size_t begin = 0; begin < cloud.vertexCount(); begin += kPieceElements) {
    const std::size_t end = std::min(cloud.vertexCount(), begin + kPieceElements);
    ascii ? appendAsciiVertices(piece, cloud, begin, end) : appendBinaryVertices(piece, cloud, begin, end);
    emit(piece);
    piece.clear();
  }
  for (std::size_t begin = 0; begin < cloud.triangleCount(); begin += kPieceElements) {
    const std::size_t end = std::min(cloud.triangleCount(), begin + kPieceElements);
    ascii ? appendAsciiTriangles(piece, cloud, begin, end) : appendBinaryTriangles(piece, cloud, begin, end);
    emit(piece);
    piece.clear();
  }
  if (!piece.empty()) emit(piece);  // the header of an empty cloud
}

}  // namespace

std::string encodePly(const PointCloud& cloud, PlyEncoding encoding, const std::string& note) {
  checkCloud(cloud);
  std::string out;
  encodeInPieces(cloud, encoding, note, [&](const std::string& piece) { out += piece; });
  return out;
}

void writePly(const std::string& path, const PointCloud& cloud, PlyEncoding encoding,
              const std::string& note) {
  try {
    checkCloud(cloud);
  } catch (const std::invalid_argument& error) {
    throw ExportError(path, error.what());
  }
  AtomicFile file(path);
  encodeInPieces(cloud, encoding, note, [&](const std::string& piece) { file.write(piece); });
  file.commit();
}

}  // namespace sapiens
