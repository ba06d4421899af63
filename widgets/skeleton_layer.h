#pragma once
// People's 3-D skeletons over the point cloud: joints as round points and bones as lines, each person in
// its track colour, drawn in a render layer of their own so that the cloud never hides them, through the
// cloud's camera. Part of PointCloudView.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

class vtkCamera;
class vtkRenderWindow;

namespace sapiens::widgets {

class SkeletonLayer {
 public:
  SkeletonLayer();
  ~SkeletonLayer();
  SkeletonLayer(const SkeletonLayer&) = delete;
  SkeletonLayer& operator=(const SkeletonLayer&) = delete;

  /// Adds the layer to `window` (which gets a second layer) looking through `camera`.
  void attach(vtkRenderWindow* window, vtkCamera* camera);
  /// `count` points (xyz floats, rgb bytes each); `joints` the points drawn, `bones` pairs of points.
  void set(const float* xyz, const std::uint8_t* rgb, std::size_t count, const std::vector<int>& joints,
           const std::vector<std::array<int, 2>>& bones);
  void setVisible(bool visible);
  bool visible() const;
  std::size_t pointCount() const;
  std::size_t jointCount() const;
  std::size_t boneCount() const;

 private:
  struct Vtk;
  std::unique_ptr<Vtk> vtk_;
};

}  // namespace sapiens::widgets
