#include "skeleton_layer.h"

#include <vtkActor.h>
#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkFloatArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkRenderWindow.h>
#include <vtkRenderer.h>
#include <vtkUnsignedCharArray.h>

#include <cstring>

namespace sapiens::widgets {

struct SkeletonLayer::Vtk {
  vtkNew<vtkRenderer> renderer;
  vtkNew<vtkPolyData> skeletons;
  vtkNew<vtkPolyDataMapper> mapper;
  vtkNew<vtkActor> actor;
};

SkeletonLayer::SkeletonLayer() : vtk_(std::make_unique<Vtk>()) {
  vtk_->mapper->SetInputData(vtk_->skeletons);
  vtk_->mapper->SetColorModeToDirectScalars();
  vtk_->mapper->SetScalarModeToUsePointData();
  vtkProperty* property = vtk_->actor->GetProperty();
  property->SetPointSize(7.0f);
  property->SetRenderPointsAsSpheres(true);
  property->SetLineWidth(3.0f);
  property->LightingOff();
  vtk_->actor->SetMapper(vtk_->mapper);
  vtk_->renderer->AddActor(vtk_->actor);
  vtk_->renderer->SetLayer(1);
  vtk_->renderer->InteractiveOff();  // the cloud's renderer takes the mouse
}

SkeletonLayer::~SkeletonLayer() = default;

void SkeletonLayer::attach(vtkRenderWindow* window, vtkCamera* camera) {
  window->SetNumberOfLayers(2);
  window->AddRenderer(vtk_->renderer);
  vtk_->renderer->SetActiveCamera(camera);
}

void SkeletonLayer::set(const float* xyz, const std::uint8_t* rgb, std::size_t count,
                        const std::vector<int>& joints, const std::vector<std::array<int, 2>>& bones) {
  vtkNew<vtkFloatArray> coordinates;
  coordinates->SetNumberOfComponents(3);
  coordinates->SetNumberOfTuples(static_cast<vtkIdType>(count));
  if (count > 0) std::memcpy(coordinates->GetPointer(0), xyz, count * 3 * sizeof(float));
  vtkNew<vtkPoints> points;
  points->SetData(coordinates);
  vtkNew<vtkUnsignedCharArray> colors;
  colors->SetNumberOfComponents(3);
  colors->SetNumberOfTuples(static_cast<vtkIdType>(count));
  if (count > 0) std::memcpy(colors->GetPointer(0), rgb, count * 3);
  vtkNew<vtkCellArray> vertices;
  for (const int joint : joints) {
    const vtkIdType id = joint;
    vertices->InsertNextCell(1, &id);
  }
  vtkNew<vtkCellArray> lines;
  for (const auto& [a, b] : bones) {
    const vtkIdType ends[2] = {a, b};
    lines->InsertNextCell(2, ends);
  }
  vtk_->skeletons->Initialize();
  vtk_->skeletons->SetPoints(points);
  vtk_->skeletons->SetVerts(vertices);
  vtk_->skeletons->SetLines(lines);
  vtk_->skeletons->GetPointData()->SetScalars(colors);
  vtk_->skeletons->Modified();
}

void SkeletonLayer::setVisible(bool visible) {
  vtk_->actor->SetVisibility(visible);
}

bool SkeletonLayer::visible() const {
  return vtk_->actor->GetVisibility() != 0;
}

std::size_t SkeletonLayer::pointCount() const {
  return static_cast<std::size_t>(vtk_->skeletons->GetNumberOfPoints());
}

std::size_t SkeletonLayer::jointCount() const {
  return static_cast<std::size_t>(vtk_->skeletons->GetNumberOfVerts());
}

std::size_t SkeletonLayer::boneCount() const {
  return static_cast<std::size_t>(vtk_->skeletons->GetNumberOfLines());
}

}  // namespace sapiens::widgets
