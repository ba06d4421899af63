// PLY point clouds from the pointmap, read back by VTK's PLY reader (an independent implementation) and by
// a hand parser of the header and binary body: vertex counts (foreground only), property names, values equal
// to the pointmap, normals from the normal map or from the geometry, colours from the picture, grid faces
// that break at depth jumps, and ASCII equal to binary.

#include "file_size_limit.h"
#include "sapiens/export/ply.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/io/export_error.h"
#include "sapiens/result/frame_result.h"
#include "test_support.h"

#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <vtkCellArray.h>
#include <vtkDataArray.h>
#include <vtkIdList.h>
#include <vtkNew.h>
#include <vtkPLYReader.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkUnsignedCharArray.h>

#include <opencv2/core.hpp>

#include <sys/resource.h>

#include <array>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

/// A person-like scene: a 12 x 9 pinhole pointmap of a slanted plane, a segmentation with the person in
/// the middle, a few invalid points (one of them on the person), and a picture whose colour encodes x, y.
struct Scene {
  static constexpr int kWidth = 12;
  static constexpr int kHeight = 9;
  sapiens::FrameResult result;
  cv::Mat image;

  Scene() {
    result.width = kWidth;
    result.height = kHeight;
    result.pointmap = cv::Mat(kHeight, kWidth, CV_32FC3);
    result.segLabels = cv::Mat(kHeight, kWidth, CV_8UC1, cv::Scalar(0));
    image = cv::Mat(kHeight, kWidth, CV_8UC3);
    for (int y = 0; y < kHeight; ++y) {
      for (int x = 0; x < kWidth; ++x) {
        const float z = 2.0f + 0.01f * static_cast<float>(x + y);
        result.pointmap.at<cv::Vec3f>(y, x) = {(x - 6.0f) * z / 10.0f, (y - 4.0f) * z / 10.0f, z};
        image.at<cv::Vec3b>(y, x) = {static_cast<uchar>(10 * x), static_cast<uchar>(20 * y), 200};  // B G R
        if (x >= 3 && x <= 8 && y >= 1 && y <= 7)
          result.segLabels.at<uchar>(y, x) = static_cast<uchar>(1 + (x + y) % 28);
      }
    }
    result.pointmap.at<cv::Vec3f>(4, 5) = {kNan, kNan, kNan};  // on the person: dropped
    result.pointmap.at<cv::Vec3f>(2, 7)[2] = -1.0f;            // behind the camera: dropped
    result.pointmap.at<cv::Vec3f>(0, 0) = {kNan, 0, 1};        // background anyway
  }

  /// The pixels that must become vertices, in row order.
  std::vector<cv::Point> expectedPixels(bool foregroundOnly) const {
    std::vector<cv::Point> pixels;
    for (int y = 0; y < kHeight; ++y) {
      for (int x = 0; x < kWidth; ++x) {
        const cv::Vec3f p = result.pointmap.at<cv::Vec3f>(y, x);
        const bool valid = std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]) && p[2] > 0;
        if (valid && (!foregroundOnly || result.segLabels.at<uchar>(y, x) > 0)) pixels.emplace_back(x, y);
      }
    }
    return pixels;
  }
};

vtkSmartPointer<vtkPolyData> readWithVtk(const std::string& path) {
  vtkNew<vtkPLYReader> reader;
  reader->SetFileName(path.c_str());
  reader->Update();
  vtkSmartPointer<vtkPolyData> output = reader->GetOutput();
  return output;
}

/// The second, independent reader: the header's element and property lines and the little-endian body.
struct ParsedPly {
  std::vector<std::string> headerLines;
  std::vector<std::array<float, 6>> vertices;  // x y z nx ny nz
  std::vector<std::array<uint8_t, 3>> colors;
  std::vector<std::array<int32_t, 3>> faces;
};

ParsedPly parseBinaryPly(const std::string& bytes) {
  ParsedPly ply;
  std::size_t at = 0;
  std::size_t vertexCount = 0, faceCount = 0, floats = 0, uchars = 0;
  while (true) {
    const auto end = bytes.find('\n', at);
    if (end == std::string::npos) return ply;
    const std::string line = bytes.substr(at, end - at);
    at = end + 1;
    ply.headerLines.push_back(line);
    if (line.rfind("element vertex ", 0) == 0) vertexCount = std::stoul(line.substr(15));
    if (line.rfind("element face ", 0) == 0) faceCount = std::stoul(line.substr(13));
    if (line.rfind("property float ", 0) == 0) ++floats;
    if (line.rfind("property uchar ", 0) == 0) ++uchars;
    if (line == "end_header") break;
  }
  const std::size_t stride = floats * 4 + uchars;
  for (std::size_t i = 0; i < vertexCount && at + stride <= bytes.size(); ++i) {
    std::array<float, 6> vertex{};
    std::memcpy(vertex.data(), bytes.data() + at, std::min<std::size_t>(floats, 6) * 4);
    ply.vertices.push_back(vertex);
    if (uchars == 3) {
      std::array<uint8_t, 3> color{};
      std::memcpy(color.data(), bytes.data() + at + floats * 4, 3);
      ply.colors.push_back(color);
    }
    at += stride;
  }
  for (std::size_t i = 0; i < faceCount && at + 13 <= bytes.size(); ++i) {
    if (bytes[at] != 3) return ply;
    std::array<int32_t, 3> face{};
    std::memcpy(face.data(), bytes.data() + at + 1, 12);
    ply.faces.push_back(face);
    at += 13;
  }
  if (at != bytes.size()) ply.faces.clear();  // trailing bytes: the file is malformed
  return ply;
}

std::array<double, 3> pointOf(vtkPolyData* data, vtkIdType id) {
  std::array<double, 3> p{};
  data->GetPoint(id, p.data());
  return p;
}

std::array<double, 3> tupleOf(vtkDataArray* array, vtkIdType id) {
  std::array<double, 3> t{};
  array->GetTuple(id, t.data());
  return t;
}

}  // namespace

using sapiens::test::FileSizeLimit;

class TestExportPly : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void binaryPlyHasForegroundPointsOnly();
  void withoutSegmentationAllValidPointsAreWritten();
  void asciiAndBinaryDescribeTheSamePoints();
  void normalsComeFromTheNormalMapWhenPresent();
  void estimatedNormalsFollowTheSurfaceAndFaceTheCamera();
  void gridFacesBreakAtDepthJumps();
  void inconsistentCloudIsRefusedNamingTheFile();
  void failedWritesLeaveNoFile();
};

void TestExportPly::binaryPlyHasForegroundPointsOnly() {
  const Scene scene;
  QTemporaryDir dir;
  const std::string path = dir.filePath("cloud.ply").toStdString();
  const sapiens::PointCloud cloud = sapiens::buildPointCloud(scene.result, scene.image);
  sapiens::writePly(path, cloud);

  const auto expected = scene.expectedPixels(true);
  QCOMPARE(expected.size(),
           std::size_t{6 * 7 - 2});  // the person (x 3..8, y 1..7) minus its two invalid points
  const auto polyData = readWithVtk(path);
  QCOMPARE(polyData->GetNumberOfPoints(), static_cast<vtkIdType>(expected.size()));
  vtkDataArray* normals = polyData->GetPointData()->GetNormals();
  auto* colors = vtkUnsignedCharArray::SafeDownCast(polyData->GetPointData()->GetArray("RGB"));
  QVERIFY(normals != nullptr);
  QVERIFY(colors != nullptr);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto id = static_cast<vtkIdType>(i);
    const cv::Vec3f source = scene.result.pointmap.at<cv::Vec3f>(expected[i]);
    const auto point = pointOf(polyData, id);
    for (int c = 0; c < 3; ++c) QCOMPARE(static_cast<float>(point[static_cast<std::size_t>(c)]), source[c]);
    const cv::Vec3b bgr = scene.image.at<cv::Vec3b>(expected[i]);
    QCOMPARE(int(colors->GetValue(id * 3 + 0)), int(bgr[2]));
    QCOMPARE(int(colors->GetValue(id * 3 + 1)), int(bgr[1]));
    QCOMPARE(int(colors->GetValue(id * 3 + 2)), int(bgr[0]));
    const auto n = tupleOf(normals, id);
    QVERIFY(std::abs(std::hypot(n[0], n[1], n[2]) - 1.0) < 1e-5);
  }

  // The hand parser sees the same header layout and the same numbers.
  const ParsedPly parsed = parseBinaryPly(readBytes(path));
  const std::vector<std::string> properties = {
      "property float x",   "property float y",     "property float z",
      "property float nx",  "property float ny",    "property float nz",
      "property uchar red", "property uchar green", "property uchar blue"};
  std::vector<std::string> seen;
  for (const auto& line : parsed.headerLines) {
    if (line.rfind("property", 0) == 0) seen.push_back(line);
  }
  QCOMPARE(seen, properties);
  QCOMPARE(parsed.headerLines[1], std::string("format binary_little_endian 1.0"));
  QVERIFY(std::find(parsed.headerLines.begin(), parsed.headerLines.end(), "element face 0") ==
          parsed.headerLines.end());
  QCOMPARE(parsed.vertices.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const cv::Vec3f source = scene.result.pointmap.at<cv::Vec3f>(expected[i]);
    for (int c = 0; c < 3; ++c) QCOMPARE(parsed.vertices[i][static_cast<std::size_t>(c)], source[c]);
    const cv::Vec3b bgr = scene.image.at<cv::Vec3b>(expected[i]);
    QCOMPARE(parsed.colors[i], (std::array<uint8_t, 3>{bgr[2], bgr[1], bgr[0]}));
  }
  QCOMPARE(cloud.pixels.size(), expected.size());
  QCOMPARE(cloud.pixels.front(), expected.front().y * Scene::kWidth + expected.front().x);
}

void TestExportPly::withoutSegmentationAllValidPointsAreWritten() {
  Scene scene;
  scene.result.segLabels.release();
  QTemporaryDir dir;
  const std::string path = dir.filePath("all.ply").toStdString();
  sapiens::writePly(path, sapiens::buildPointCloud(scene.result, scene.image));
  const auto expected = scene.expectedPixels(false);
  QCOMPARE(expected.size(), std::size_t{Scene::kWidth * Scene::kHeight - 3});
  const auto polyData = readWithVtk(path);
  QCOMPARE(polyData->GetNumberOfPoints(), static_cast<vtkIdType>(expected.size()));
  const auto last = pointOf(polyData, polyData->GetNumberOfPoints() - 1);
  QCOMPARE(static_cast<float>(last[2]), scene.result.pointmap.at<cv::Vec3f>(expected.back())[2]);

  // Without a picture there are no colour properties at all.
  const sapiens::PointCloud uncolored = sapiens::buildPointCloud(scene.result, cv::Mat());
  QVERIFY(uncolored.colors.empty());
  const std::string text = sapiens::encodePly(uncolored, sapiens::PlyEncoding::Ascii);
  QVERIFY(text.find("property uchar red") == std::string::npos);
  QVERIFY(text.find("property float nx") != std::string::npos);
}

void TestExportPly::asciiAndBinaryDescribeTheSamePoints() {
  Scene scene;
  cv::Mat noisy = scene.result.pointmap.clone();
  cv::Mat noise(noisy.size(), CV_32FC3);
  cv::randu(noise, -0.01, 0.01);  // values without short decimal forms
  scene.result.pointmap = noisy + noise;
  QTemporaryDir dir;
  const std::string binaryPath = dir.filePath("binary.ply").toStdString();
  const std::string asciiPath = dir.filePath("ascii.ply").toStdString();
  sapiens::PointCloudOptions options;
  options.withFaces = true;
  const sapiens::PointCloud cloud = sapiens::buildPointCloud(scene.result, scene.image, options);
  QVERIFY(cloud.triangleCount() > 0);
  sapiens::writePly(binaryPath, cloud, sapiens::PlyEncoding::BinaryLittleEndian);
  sapiens::writePly(asciiPath, cloud, sapiens::PlyEncoding::Ascii);
  QVERIFY(readBytes(asciiPath).find("format ascii 1.0\n") != std::string::npos);

  const auto binary = readWithVtk(binaryPath);
  const auto ascii = readWithVtk(asciiPath);
  QCOMPARE(ascii->GetNumberOfPoints(), binary->GetNumberOfPoints());
  QCOMPARE(ascii->GetNumberOfPolys(), binary->GetNumberOfPolys());
  QCOMPARE(binary->GetNumberOfPolys(), static_cast<vtkIdType>(cloud.triangleCount()));
  for (vtkIdType i = 0; i < binary->GetNumberOfPoints(); ++i) {
    QCOMPARE(pointOf(ascii, i), pointOf(binary, i));
    QCOMPARE(tupleOf(ascii->GetPointData()->GetNormals(), i),
             tupleOf(binary->GetPointData()->GetNormals(), i));
    QCOMPARE(tupleOf(ascii->GetPointData()->GetArray("RGB"), i),
             tupleOf(binary->GetPointData()->GetArray("RGB"), i));
  }
  vtkNew<vtkIdList> asciiCell, binaryCell;
  for (vtkIdType c = 0; c < binary->GetNumberOfPolys(); ++c) {
    binary->GetCellPoints(c, binaryCell);
    ascii->GetCellPoints(c, asciiCell);
    QCOMPARE(asciiCell->GetNumberOfIds(), vtkIdType{3});
    for (vtkIdType k = 0; k < 3; ++k) QCOMPARE(asciiCell->GetId(k), binaryCell->GetId(k));
  }
}

void TestExportPly::normalsComeFromTheNormalMapWhenPresent() {
  Scene scene;
  scene.result.normal = cv::Mat(Scene::kHeight, Scene::kWidth, CV_32FC3);
  for (int y = 0; y < Scene::kHeight; ++y) {
    for (int x = 0; x < Scene::kWidth; ++x) {
      const cv::Vec3f n(0.1f * static_cast<float>(x) - 0.5f, 0.05f * static_cast<float>(y), -1.0f);
      scene.result.normal.at<cv::Vec3f>(y, x) = n / static_cast<float>(cv::norm(n));
    }
  }
  QTemporaryDir dir;
  const std::string path = dir.filePath("normals.ply").toStdString();
  sapiens::writePly(path, sapiens::buildPointCloud(scene.result, scene.image));
  const auto polyData = readWithVtk(path);
  const auto expected = scene.expectedPixels(true);
  vtkDataArray* normals = polyData->GetPointData()->GetNormals();
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const cv::Vec3f source = scene.result.normal.at<cv::Vec3f>(expected[i]);
    const auto n = tupleOf(normals, static_cast<vtkIdType>(i));
    for (int c = 0; c < 3; ++c) QCOMPARE(static_cast<float>(n[static_cast<std::size_t>(c)]), source[c]);
  }
}

void TestExportPly::estimatedNormalsFollowTheSurfaceAndFaceTheCamera() {
  // A plane z = 5 + 0.5 x (x, y in point units): its normal towards the camera is (0.5, 0, -1) / |.|.
  cv::Mat pointmap(6, 8, CV_32FC3);
  for (int y = 0; y < 6; ++y) {
    for (int x = 0; x < 8; ++x) pointmap.at<cv::Vec3f>(y, x) = {float(x), float(y), 5.0f + 0.5f * float(x)};
  }
  sapiens::PointCloudOptions options;
  options.maxRelativeDepthJump = 0.2f;
  const sapiens::PointCloud cloud =
      sapiens::buildPointCloud(pointmap, cv::Mat(), cv::Mat(), cv::Mat(), options);
  QCOMPARE(cloud.vertexCount(), std::size_t{48});
  const double length = std::hypot(0.5, 1.0);
  for (std::size_t i = 0; i < cloud.vertexCount(); ++i) {  // corners and edges (one-sided) included
    QVERIFY(std::abs(cloud.normals[i * 3 + 0] - 0.5 / length) < 1e-5);
    QVERIFY(std::abs(cloud.normals[i * 3 + 1]) < 1e-5);
    QVERIFY(std::abs(cloud.normals[i * 3 + 2] + 1.0 / length) < 1e-5);
  }

  // An isolated point (no neighbour on its surface) faces the camera: the direction back to the origin.
  cv::Mat lonely(3, 3, CV_32FC3, cv::Scalar(kNan, kNan, kNan));
  lonely.at<cv::Vec3f>(1, 1) = {3.0f, 0.0f, 4.0f};
  const sapiens::PointCloud single = sapiens::buildPointCloud(lonely, cv::Mat(), cv::Mat(), cv::Mat());
  QCOMPARE(single.vertexCount(), std::size_t{1});
  QCOMPARE(single.normals, (std::vector<float>{-0.6f, 0.0f, -0.8f}));
}

void TestExportPly::gridFacesBreakAtDepthJumps() {
  // Left 5 columns at 2 m, right 5 at 4 m: a silhouette between columns 4 and 5.
  constexpr int kWidth = 10, kHeight = 7;
  cv::Mat pointmap(kHeight, kWidth, CV_32FC3);
  for (int y = 0; y < kHeight; ++y) {
    for (int x = 0; x < kWidth; ++x) {
      const float z = x < 5 ? 2.0f : 4.0f;
      pointmap.at<cv::Vec3f>(y, x) = {(x - 5.0f) * z / 8.0f, (y - 3.0f) * z / 8.0f, z};
    }
  }
  sapiens::PointCloudOptions options;
  options.withFaces = true;
  QTemporaryDir dir;
  const std::string path = dir.filePath("mesh.ply").toStdString();
  const sapiens::PointCloud cloud =
      sapiens::buildPointCloud(pointmap, cv::Mat(), cv::Mat(), cv::Mat(), options);
  sapiens::writePly(path, cloud);

  const auto polyData = readWithVtk(path);
  QCOMPARE(polyData->GetNumberOfPoints(), vtkIdType{kWidth * kHeight});
  QCOMPARE(polyData->GetNumberOfPolys(), vtkIdType{2 * (kWidth - 2) * (kHeight - 1)});
  vtkNew<vtkIdList> cell;
  for (vtkIdType c = 0; c < polyData->GetNumberOfPolys(); ++c) {
    polyData->GetCellPoints(c, cell);
    QCOMPARE(cell->GetNumberOfIds(), vtkIdType{3});
    std::array<std::array<double, 3>, 3> corner{};
    for (vtkIdType k = 0; k < 3; ++k) corner[static_cast<std::size_t>(k)] = pointOf(polyData, cell->GetId(k));
    // No triangle spans the jump, and each faces the camera (counter-clockwise seen from it).
    QCOMPARE(corner[0][2], corner[1][2]);
    QCOMPARE(corner[1][2], corner[2][2]);
    const std::array<double, 3> u = {corner[1][0] - corner[0][0], corner[1][1] - corner[0][1],
                                     corner[1][2] - corner[0][2]};
    const std::array<double, 3> v = {corner[2][0] - corner[0][0], corner[2][1] - corner[0][1],
                                     corner[2][2] - corner[0][2]};
    const double normalZ = u[0] * v[1] - u[1] * v[0];
    QVERIFY(normalZ < 0);
  }

  // The binary body parsed by hand holds the same triangles.
  const ParsedPly parsed = parseBinaryPly(readBytes(path));
  QVERIFY(std::find(parsed.headerLines.begin(), parsed.headerLines.end(),
                    "property list uchar int vertex_indices") != parsed.headerLines.end());
  QCOMPARE(parsed.faces.size(), cloud.triangleCount());
  for (std::size_t t = 0; t < parsed.faces.size(); ++t) {
    for (std::size_t k = 0; k < 3; ++k)
      QCOMPARE(static_cast<std::uint32_t>(parsed.faces[t][k]), cloud.triangles[t * 3 + k]);
  }

  // A tolerance above the jump (100 %) meshes across it; the segmentation removes faces with its points.
  options.maxRelativeDepthJump = 1.5f;
  QCOMPARE(sapiens::buildPointCloud(pointmap, cv::Mat(), cv::Mat(), cv::Mat(), options).triangleCount(),
           std::size_t{2 * (kWidth - 1) * (kHeight - 1)});
  cv::Mat labels(kHeight, kWidth, CV_8UC1, cv::Scalar(1));
  labels.at<uchar>(3, 2) = 0;  // a hole: the four cells around it lose their two triangles each
  QCOMPARE(sapiens::buildPointCloud(pointmap, cv::Mat(), labels, cv::Mat(), options).triangleCount(),
           std::size_t{2 * (kWidth - 1) * (kHeight - 1) - 8});
}

void TestExportPly::inconsistentCloudIsRefusedNamingTheFile() {
  QTemporaryDir dir;
  sapiens::PointCloud cloud;
  cloud.positions = {0, 0, 1, 1, 0, 1, 0, 1, 1};
  cloud.triangles = {0, 1, 3};  // vertex 3 does not exist
  const std::string path = dir.filePath("bad.ply").toStdString();
  try {
    sapiens::writePly(path, cloud);
    QFAIL("a triangle with a missing vertex was written");
  } catch (const sapiens::ExportError& error) {
    QCOMPARE(error.path(), path);
    QVERIFY2(QString(error.what()).contains("vertex 3"), error.what());
  }
  QVERIFY(!QFile::exists(QString::fromStdString(path)));

  const Scene scene;
  cv::Mat smallImage(4, 4, CV_8UC3);
  try {
    sapiens::buildPointCloud(scene.result, smallImage);
    QFAIL("a picture of another size was accepted");
  } catch (const std::invalid_argument& error) {
    QVERIFY2(QString(error.what()).contains("4x4") && QString(error.what()).contains("12x9"), error.what());
  }
}

void TestExportPly::failedWritesLeaveNoFile() {
  const Scene scene;
  const sapiens::PointCloud cloud = sapiens::buildPointCloud(scene.result, scene.image);
  QTemporaryDir dir;
  const std::string missing = dir.filePath("no/such/folder/cloud.ply").toStdString();
  try {
    sapiens::writePly(missing, cloud);
    QFAIL("writing into a missing folder succeeded");
  } catch (const sapiens::IoError& error) {
    QVERIFY2(QString(error.what()).contains(QString::fromStdString(missing)), error.what());
  }

  // A full disk mid-way: the previous file stays as it was and no temporary file is left behind.
  const std::string path = dir.filePath("cloud.ply").toStdString();
  {
    std::ofstream previous(path);
    previous << "previous contents";
  }
  const cv::Mat wall(100, 100, CV_32FC3, cv::Scalar(0.0f, 0.0f, 3.0f));
  const sapiens::PointCloud big = sapiens::buildPointCloud(wall, cv::Mat(), cv::Mat(), cv::Mat());
  QVERIFY(sapiens::encodePly(big).size() > 200 * 1024);
  try {
    FileSizeLimit limit(64 * 1024);
    sapiens::writePly(path, big);
    QFAIL("a write past the file size limit succeeded");
  } catch (const sapiens::IoError& error) {
    QVERIFY2(QString(error.what()).contains(QString::fromStdString(path)), error.what());
    QVERIFY2(QString(error.what()).contains("too large"), error.what());
  }
  QCOMPARE(readBytes(path), std::string("previous contents"));
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"cloud.ply"});
}

QTEST_APPLESS_MAIN(TestExportPly)
#include "test_export_ply.moc"
