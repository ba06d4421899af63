// The pointmap's mesh as binary glTF: a well-formed GLB (header, JSON and BIN chunks, accessors that
// cover the data), in glTF's y-up frame, and read back by an independent reader, Open3D (python3-open3d),
// with the same vertices, triangles and colours.

#include "sapiens/export/glb.h"
#include "sapiens/export/point_cloud.h"
#include "sapiens/io/export_error.h"
#include "test_support.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>
#include <opencv2/core.hpp>

#include <cstdint>
#include <cstring>

using namespace sapiens;

namespace {

// A 6 x 4 pointmap: a plane 2 m away, its right third 1 m behind it (a depth jump the mesh breaks at).
PointCloud steppedMesh() {
  cv::Mat pointmap(4, 6, CV_32FC3), picture(4, 6, CV_8UC3);
  for (int y = 0; y < 4; ++y) {
    for (int x = 0; x < 6; ++x) {
      const float z = x < 4 ? 2.0f : 3.0f;
      pointmap.at<cv::Vec3f>(y, x) = {0.1f * (x - 3) * z, 0.1f * (y - 2) * z, z};
      picture.at<cv::Vec3b>(y, x) = {static_cast<uchar>(10 * x), static_cast<uchar>(40 * y), 200};
    }
  }
  PointCloudOptions options;
  options.withFaces = true;
  return buildPointCloud(pointmap, cv::Mat(), cv::Mat(), picture, options);
}

std::uint32_t u32(const QByteArray& bytes, int offset) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.constData() + offset, 4);
  return value;
}

QString python() {
  return QFileInfo::exists("/usr/bin/python3") ? QStringLiteral("/usr/bin/python3")
                                               : QStringLiteral("python3");
}

}  // namespace

class TestExportGlb : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void theFileIsWellFormedGltf() {
    const PointCloud mesh = steppedMesh();
    QCOMPARE(mesh.vertexCount(), std::size_t{24});
    QVERIFY(mesh.triangleCount() > 0 && mesh.triangleCount() < 2 * 5 * 3);  // broken at the step
    QTemporaryDir dir;
    const QString path = dir.filePath("m.glb");
    writeGlb(path.toStdString(), mesh, "a note");
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    QCOMPARE(u32(bytes, 0), std::uint32_t{0x46546C67});
    QCOMPARE(u32(bytes, 4), std::uint32_t{2});
    QCOMPARE(qsizetype(u32(bytes, 8)), bytes.size());
    const std::uint32_t jsonLength = u32(bytes, 12);
    QCOMPARE(u32(bytes, 16), std::uint32_t{0x4E4F534A});
    QCOMPARE(jsonLength % 4, std::uint32_t{0});
    const auto json = nlohmann::json::parse(bytes.mid(20, int(jsonLength)).toStdString());
    const int binAt = 20 + int(jsonLength);
    QCOMPARE(u32(bytes, binAt + 4), std::uint32_t{0x004E4942});
    QCOMPARE(qsizetype(u32(bytes, binAt)) + binAt + 8, bytes.size());
    QCOMPARE(json["asset"]["version"].get<std::string>(), std::string("2.0"));
    QCOMPARE(json["asset"]["extras"]["note"].get<std::string>(), std::string("a note"));
    const auto& primitive = json["meshes"][0]["primitives"][0];
    QCOMPARE(primitive["mode"].get<int>(), 4);
    const auto& accessors = json["accessors"];
    QCOMPARE(accessors[primitive["attributes"]["POSITION"].get<int>()]["count"].get<std::size_t>(),
             mesh.vertexCount());
    QCOMPARE(accessors[primitive["indices"].get<int>()]["count"].get<std::size_t>(), mesh.triangles.size());
    // Turned into glTF's frame: the plane 2 m in front of the camera is at z = -2, y up.
    const auto& position = accessors[primitive["attributes"]["POSITION"].get<int>()];
    QCOMPARE(position["max"][2].get<float>(), -2.0f);
    QCOMPARE(position["min"][2].get<float>(), -3.0f);
    for (const auto& view : json["bufferViews"])
      QVERIFY(view["byteOffset"].get<std::size_t>() + view["byteLength"].get<std::size_t>() <=
              u32(bytes, binAt));
  }

  void openThreeDReadsTheSameMesh() {
    const PointCloud mesh = steppedMesh();
    QTemporaryDir dir;
    const QString path = dir.filePath("m.glb");
    writeGlb(path.toStdString(), mesh);
    QProcess reader;
    reader.start(python(),
                 {"-c",
                  "import sys, open3d as o3d\n"
                  "m = o3d.io.read_triangle_mesh(sys.argv[1])\n"
                  "v = m.vertices[0]; c = m.vertex_colors[0] if m.has_vertex_colors() else (-1, -1, -1)\n"
                  "print(len(m.vertices), len(m.triangles), int(m.has_vertex_colors()))\n"
                  "print(' '.join('%.6f' % x for x in list(v) + list(c)))\n",
                  path});
    QVERIFY(reader.waitForFinished(120000));
    const QString out = QString::fromUtf8(reader.readAllStandardOutput());
    const QString err = QString::fromUtf8(reader.readAllStandardError());
    QVERIFY2(
        reader.exitCode() == 0,
        qPrintable("Open3D could not read the GLB (python3-open3d is installed by scripts/install-deps): " +
                   err));
    const QStringList lines = out.trimmed().split('\n');
    QCOMPARE(lines.size(), 2);
    const QStringList counts = lines[0].split(' ');
    QCOMPARE(counts[0].toULongLong(), qulonglong(mesh.vertexCount()));
    QCOMPARE(counts[1].toULongLong(), qulonglong(mesh.triangleCount()));
    QCOMPARE(counts[2], QStringLiteral("1"));
    const QStringList first = lines[1].split(' ');
    QCOMPARE(first[0].toFloat(), mesh.positions[0]);
    QCOMPARE(first[1].toFloat(), -mesh.positions[1]);
    QCOMPARE(first[2].toFloat(), -mesh.positions[2]);
    for (int c = 0; c < 3; ++c)
      QVERIFY2(std::abs(first[3 + c].toFloat() - mesh.colors[c] / 255.0f) < 1e-5f, qPrintable(lines[1]));
  }

  void aMeshWithoutTrianglesIsRefusedWithItsPath() {
    PointCloud points;
    points.positions = {0, 0, 1};
    QTemporaryDir dir;
    const std::string path = dir.filePath("none.glb").toStdString();
    try {
      writeGlb(path, points);
      QFAIL("a mesh without triangles was written");
    } catch (const ExportError& e) {
      QVERIFY2(QString(e.what()).contains("none.glb") && QString(e.what()).contains("no triangles"),
               e.what());
    }
    QVERIFY(!QFile::exists(QString::fromStdString(path)));
  }
};

QTEST_APPLESS_MAIN(TestExportGlb)
#include "test_export_glb.moc"
