#include "sapiens/export/glb.h"

#include "sapiens/common/version.h"
#include "sapiens/io/atomic_file.h"
#include "sapiens/io/export_error.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

namespace sapiens {
namespace {

constexpr std::uint32_t kMagic = 0x46546C67;      // "glTF"
constexpr std::uint32_t kJsonChunk = 0x4E4F534A;  // "JSON"
constexpr std::uint32_t kBinChunk = 0x004E4942;   // "BIN\0"
constexpr int kFloat = 5126, kUnsignedByte = 5121, kUnsignedInt = 5125;
constexpr int kArrayBuffer = 34962, kElementArrayBuffer = 34963;

// The binary chunk, one buffer view per attribute, each 4-byte aligned.
class BinaryChunk {
 public:
  /// Appends `bytes`, returns its buffer view's index.
  int add(const void* data, std::size_t bytes, int target, nlohmann::json& views) {
    const std::size_t offset = data_.size();
    data_.append(static_cast<const char*>(data), bytes);
    data_.append((4 - data_.size() % 4) % 4, '\0');
    views.push_back({{"buffer", 0}, {"byteOffset", offset}, {"byteLength", bytes}, {"target", target}});
    return static_cast<int>(views.size()) - 1;
  }
  const std::string& data() const { return data_; }

 private:
  std::string data_;
};

// (x, y, z) -> (x, -y, -z): the camera frame turned into glTF's.
std::vector<float> toGltfFrame(const std::vector<float>& xyz) {
  std::vector<float> out(xyz);
  for (std::size_t i = 0; i < out.size(); i += 3) out[i + 1] = -out[i + 1], out[i + 2] = -out[i + 2];
  return out;
}

nlohmann::json bounds(const std::vector<float>& xyz, bool wantMax) {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t axis = 0; axis < 3; ++axis) {
    float value = wantMax ? -std::numeric_limits<float>::max() : std::numeric_limits<float>::max();
    for (std::size_t i = axis; i < xyz.size(); i += 3)
      value = wantMax ? std::max(value, xyz[i]) : std::min(value, xyz[i]);
    out.push_back(value);
  }
  return out;
}

void appendU32(std::string& out, std::uint32_t value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);  // little-endian hosts only, as every target of this project
  out.append(bytes, 4);
}

std::string assemble(const nlohmann::json& document, const std::string& binary) {
  std::string json = document.dump();
  json.append((4 - json.size() % 4) % 4, ' ');
  const std::uint64_t total = 12 + 8 + json.size() + 8 + binary.size();
  std::string out;
  out.reserve(total);
  appendU32(out, kMagic);
  appendU32(out, 2);
  appendU32(out, static_cast<std::uint32_t>(total));
  appendU32(out, static_cast<std::uint32_t>(json.size()));
  appendU32(out, kJsonChunk);
  out += json;
  appendU32(out, static_cast<std::uint32_t>(binary.size()));
  appendU32(out, kBinChunk);
  out += binary;
  return out;
}

}  // namespace

void writeGlb(const std::string& path, const PointCloud& mesh, const std::string& note) {
  if (mesh.triangleCount() == 0)
    throw ExportError(path, "the mesh has no triangles (no neighbouring foreground points to join)");
  const std::uint64_t estimate = mesh.positions.size() * 8 + mesh.colors.size() + mesh.triangles.size() * 4;
  if (estimate > std::numeric_limits<std::uint32_t>::max() - 4096)
    throw ExportError(path, fmt::format("the mesh ({} vertices, {} triangles) is beyond glTF's 4 GiB limit",
                                        mesh.vertexCount(), mesh.triangleCount()));
  const auto vertices = static_cast<std::int64_t>(mesh.vertexCount());
  nlohmann::json views = nlohmann::json::array(), accessors = nlohmann::json::array(), attributes;
  BinaryChunk binary;
  const std::vector<float> positions = toGltfFrame(mesh.positions);
  const int positionView =
      binary.add(positions.data(), positions.size() * sizeof(float), kArrayBuffer, views);
  accessors.push_back({{"bufferView", positionView},
                       {"componentType", kFloat},
                       {"count", vertices},
                       {"type", "VEC3"},
                       {"min", bounds(positions, false)},
                       {"max", bounds(positions, true)}});
  attributes["POSITION"] = accessors.size() - 1;
  if (mesh.normals.size() == mesh.positions.size()) {
    const std::vector<float> normals = toGltfFrame(mesh.normals);
    const int view = binary.add(normals.data(), normals.size() * sizeof(float), kArrayBuffer, views);
    accessors.push_back(
        {{"bufferView", view}, {"componentType", kFloat}, {"count", vertices}, {"type", "VEC3"}});
    attributes["NORMAL"] = accessors.size() - 1;
  }
  if (mesh.colors.size() ==
      mesh.positions.size()) {  // RGBA: a vertex attribute's elements are 4-byte aligned
    std::vector<std::uint8_t> rgba(mesh.vertexCount() * 4, 255);
    for (std::size_t v = 0; v < mesh.vertexCount(); ++v) std::copy_n(&mesh.colors[3 * v], 3, &rgba[4 * v]);
    const int view = binary.add(rgba.data(), rgba.size(), kArrayBuffer, views);
    accessors.push_back({{"bufferView", view},
                         {"componentType", kUnsignedByte},
                         {"normalized", true},
                         {"count", vertices},
                         {"type", "VEC4"}});
    attributes["COLOR_0"] = accessors.size() - 1;
  }
  const int indexView = binary.add(mesh.triangles.data(), mesh.triangles.size() * sizeof(std::uint32_t),
                                   kElementArrayBuffer, views);
  accessors.push_back({{"bufferView", indexView},
                       {"componentType", kUnsignedInt},
                       {"count", mesh.triangles.size()},
                       {"type", "SCALAR"}});
  nlohmann::json asset = {{"version", "2.0"}, {"generator", "Sapiens2 Studio " + versionString()}};
  if (!note.empty()) asset["extras"] = {{"note", note}};
  const nlohmann::json document = {
      {"asset", asset},
      {"scene", 0},
      {"scenes", {{{"nodes", {0}}}}},
      {"nodes", {{{"mesh", 0}, {"name", "pointmap"}}}},
      {"meshes",
       {{{"primitives", {{{"attributes", attributes}, {"indices", accessors.size() - 1}, {"mode", 4}}}}}}},
      {"accessors", accessors},
      {"bufferViews", views},
      {"buffers", {{{"byteLength", binary.data().size()}}}}};
  writeFileAtomically(path, assemble(document, binary.data()));
}

}  // namespace sapiens
