// The catalogue of official checkpoints and the validation of files against it (header, task,
// architecture), including a header-valid 0.4b file made sparse so that no gigabytes are written.

#include "sapiens/model/model_zoo.h"
#include "sapiens/model/parameter_layout.h"
#include "test_support.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <set>

using namespace sapiens;

namespace {

// The official layout's header with every tensor F32, and the data area left as a hole.
void writeSparseCheckpoint(const std::string& path, const Architecture& arch) {
  nlohmann::ordered_json header;
  header["__metadata__"] = {{"format", "pt"}};
  std::uint64_t offset = 0;
  for (const ParameterSpec& spec : expectedParameters(arch)) {
    const std::uint64_t bytes = 4 * static_cast<std::uint64_t>(spec.numel());
    header[spec.name] = {{"dtype", "F32"}, {"shape", spec.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  QVERIFY(fd >= 0);
  std::uint64_t length = text.size();
  unsigned char prefix[8];
  for (unsigned char& b : prefix) {
    b = static_cast<unsigned char>(length & 0xff);
    length >>= 8;
  }
  QVERIFY(::write(fd, prefix, 8) == 8);
  QVERIFY(::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  QVERIFY(::ftruncate(fd, static_cast<off_t>(8 + text.size() + offset)) == 0);
  ::close(fd);
}

}  // namespace

class TestModelZoo : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void catalogueListsEveryReleasedCheckpoint() {
    const auto& all = zoo::catalogue();
    QCOMPARE(all.size(), std::size_t{23});
    std::set<std::string> ids;
    for (const zoo::Entry& e : all) {
      QVERIFY2(ids.insert(e.id).second, e.id.c_str());
      QCOMPARE(e.repository, "facebook/sapiens2-" + e.id);
      QCOMPARE(e.dataBytesIfF32, 4 * static_cast<std::uint64_t>(e.elements));
      QVERIFY(e.task != Task::Albedo);
    }
    // Figures from the reference notes (shared/docs/sapiens2-model.md, sections 1.3 and 2.7).
    const zoo::Entry* pose = zoo::find("pose-0.4b");
    QVERIFY(pose);
    QCOMPARE(pose->fileName, std::string("sapiens2_0.4b_pose.safetensors"));
    QCOMPARE(pose->relativePath, std::string("pose/sapiens2_0.4b_pose.safetensors"));
    QCOMPARE(pose->tensors, std::int64_t{424});
    QCOMPARE(pose->elements, std::int64_t{425677380});
    QCOMPARE(zoo::find("pose-0.8b")->dataBytesIfF32, std::uint64_t{3394819360});
    QCOMPARE(zoo::find("pretrain-0.1b")->elements, std::int64_t{113993488});
    QCOMPARE(zoo::find("pretrain-1b-4k")->fileName, std::string("sapiens2_1b_4k_pretrain.safetensors"));
    QCOMPARE(zoo::find("pointmap-5b")->tensors, std::int64_t{988});
    // Matting (1b only): the 1b backbone and the official config's MattingHead (upsample 768, 512, 256, 128;
    // conv 64, 32, 16 of 3x3; 4 outputs), counted by hand.
    const zoo::Entry* matting = zoo::find("matting-1b");
    QVERIFY(matting);
    QCOMPARE(matting->fileName, std::string("sapiens2_1b_matting.safetensors"));
    QCOMPARE(matting->relativePath, std::string("matting/sapiens2_1b_matting.safetensors"));
    const auto conv = [](std::int64_t in, std::int64_t out, std::int64_t k) {
      return out * in * k * k + out;
    };
    const std::int64_t head = conv(1536, 1536, 3) + conv(1536, 4 * 768, 3) + conv(768, 4 * 512, 3) +
                              conv(512, 4 * 256, 3) + conv(256, 4 * 128, 3) + conv(128, 64, 3) +
                              conv(64, 32, 3) + conv(32, 16, 3) + conv(16, 4, 1);
    QCOMPARE(matting->elements, zoo::find("pretrain-1b")->elements + head);
    QVERIFY(zoo::find("matting-0.4b") == nullptr);
    QCOMPARE(zoo::downloadUrl(*pose, "https://huggingface.co"),
             std::string("https://huggingface.co/facebook/sapiens2-pose-0.4b/resolve/main/"
                         "sapiens2_0.4b_pose.safetensors"));
    QCOMPARE(zoo::downloadUrl(*pose, "http://127.0.0.1:8080/"),
             std::string("http://127.0.0.1:8080/facebook/sapiens2-pose-0.4b/resolve/main/"
                         "sapiens2_0.4b_pose.safetensors"));
    // Other spellings.
    QCOMPARE(zoo::find("sapiens2_1b_seg.safetensors"), zoo::find("seg-1b"));
    QCOMPARE(zoo::find("sapiens2_1b_seg"), zoo::find("seg-1b"));
    QCOMPARE(zoo::find("facebook/sapiens2-seg-1b"), zoo::find("seg-1b"));
    QVERIFY(!zoo::find("albedo-0.4b"));
    QVERIFY(!zoo::find("pose-0.1b"));
  }

  void theStarterSetHasOneFilePerTaskWithARelease() {
    const auto set = zoo::starterSet({Task::Pose, Task::Seg, Task::Albedo, Task::Matting}, "0.4b");
    QCOMPARE(set.size(), std::size_t{3});  // no albedo checkpoint was released
    QCOMPARE(set[0], zoo::find("pose-0.4b"));
    QCOMPARE(set[1], zoo::find("seg-0.4b"));
    QCOMPARE(set[2], zoo::find("matting-1b"));  // matting came at 1b only
    QCOMPARE(zoo::starterSet({Task::Normal}, "1b").front(), zoo::find("normal-1b"));
  }

  void filesAreCheckedAgainstTheirEntry() {
    QTemporaryDir dir;
    const std::string root = dir.path().toStdString();
    const zoo::Entry& seg = *zoo::find("seg-0.4b");
    QCOMPARE(zoo::checkInstalled(seg, root).state, zoo::FileState::Missing);

    // A header-valid official 0.4b seg file (sparse: 1.6 GB of holes).
    writeSparseCheckpoint(root + "/" + seg.relativePath, seg.architecture());
    zoo::FileCheck check = zoo::checkInstalled(seg, root);
    QVERIFY2(check.state == zoo::FileState::Valid, check.problem.c_str());
    QVERIFY(check.bytes > seg.dataBytesIfF32);
    // The same file is not the 0.8b one, nor a pose model.
    check = zoo::checkFile(*zoo::find("seg-0.8b"), check.path);
    QCOMPARE(check.state, zoo::FileState::Invalid);
    QVERIFY2(QString::fromStdString(check.problem).contains("is not sapiens2_0.8b_seg.safetensors"),
             check.problem.c_str());
    check = zoo::checkFile(*zoo::find("pose-0.4b"), zoo::checkInstalled(seg, root).path);
    QVERIFY2(QString::fromStdString(check.problem).contains("holds a seg model, not pose"),
             check.problem.c_str());

    // A small custom model under an official name.
    const std::string fake = root + "/pose/" + zoo::find("pose-0.4b")->fileName;
    std::filesystem::create_directories(root + "/pose");
    std::filesystem::copy_file(test::fixture("golden/pose/model.safetensors"), fake);
    check = zoo::checkFile(*zoo::find("pose-0.4b"), fake);
    QCOMPARE(check.state, zoo::FileState::Invalid);
    QVERIFY2(QString::fromStdString(check.problem).contains("a custom architecture"), check.problem.c_str());

    // A truncated download.
    const std::string truncated = root + "/truncated.safetensors";
    writeSparseCheckpoint(truncated, seg.architecture());
    std::filesystem::resize_file(truncated, 1000000);
    check = zoo::checkFile(seg, truncated);
    QCOMPARE(check.state, zoo::FileState::Invalid);
    QVERIFY2(!check.problem.empty(), "a reason");
  }
};

QTEST_GUILESS_MAIN(TestModelZoo)
#include "test_model_zoo.moc"
