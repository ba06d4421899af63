#pragma once
// Point clouds and meshes as Stanford PLY: vertex x y z (float), nx ny nz (float, when the cloud has
// normals), red green blue (uchar, when it has colours), and face vertex_indices (list uchar int, when it
// has triangles). Readable by MeshLab, CloudCompare, Open3D, Blender and VTK.

#include <string>

namespace sapiens {

struct PointCloud;

enum class PlyEncoding { BinaryLittleEndian, Ascii };

/// The complete file contents. ASCII numbers are the shortest text that reads back as the same float,
/// so both encodings describe exactly the same points.
/// A non-empty `note` (e.g. that the points come from untrained demo weights) becomes a header comment.
/// Throws std::invalid_argument for an inconsistent cloud (array sizes, a triangle index out of range).
std::string encodePly(const PointCloud& cloud, PlyEncoding encoding = PlyEncoding::BinaryLittleEndian,
                      const std::string& note = {});

/// Writes atomically. Throws ExportError naming the file for an inconsistent cloud, IoError when the file
/// cannot be written.
void writePly(const std::string& path, const PointCloud& cloud,
              PlyEncoding encoding = PlyEncoding::BinaryLittleEndian, const std::string& note = {});

}  // namespace sapiens
