#pragma once
// A pointmap's mesh as binary glTF 2.0 (.glb), the format the official pointmap demo and 3-D tools
// exchange: positions, normals, vertex colours (COLOR_0) and triangles, one primitive.

#include "sapiens/export/point_cloud.h"

#include <string>

namespace sapiens {

/// Writes `mesh` (buildPointCloud with withFaces: split where the depth jumps) atomically. glTF is y-up with
/// the viewer looking down -z, so the pointmap's camera frame (x right, y down, z forward) is turned half a
/// turn about x: (x, y, z) -> (x, -y, -z), normals alike; the camera stays at the origin and the faces
/// keep facing it. Colours are written when the mesh has them. A non-empty `note` (e.g. the demo-weights
/// notice) goes into asset.extras.note. Throws ExportError naming `path` for a mesh without triangles or
/// one beyond glTF's 4 GiB, IoError when the file cannot be written.
void writeGlb(const std::string& path, const PointCloud& mesh, const std::string& note = {});

}  // namespace sapiens
