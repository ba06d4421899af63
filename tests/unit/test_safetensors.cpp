// The safetensors reader and writer: malformed files are refused with a precise message, every dtype
// survives a round trip, aligned entries are mapped without a copy, and the golden fixtures read back.

#include "file_size_limit.h"
#include "sapiens/model/safetensors.h"
#include "sapiens/model/safetensors_torch.h"
#include "test_support.h"

#include <ATen/ATen.h>
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

Q_DECLARE_METATYPE(std::string)

namespace {

std::string lengthPrefix(std::uint64_t length) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  return bytes;
}

/// A safetensors file from a literal header and data area (the header is not padded).
std::string craft(const std::string& header, const std::string& data = {}) {
  return lengthPrefix(header.size()) + header + data;
}

/// Same, with the header padded with spaces so that the data area starts 8-aligned in the file.
std::string craftAligned(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return craft(header, data);
}

std::string f32Entry(const std::string& name, const std::string& shape, std::uint64_t begin,
                     std::uint64_t end) {
  return "\"" + name + "\": {\"dtype\": \"F32\", \"shape\": " + shape + ", \"data_offsets\": [" +
         std::to_string(begin) + ", " + std::to_string(end) + "]}";
}

template <typename T>
std::string bytesOf(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

void writeBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  QVERIFY2(out.good(), path.c_str());
}

std::string readBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

/// The message SafetensorsFile::open throws for `path`, or "" when it opens.
std::string openError(const std::string& path) {
  try {
    sapiens::SafetensorsFile::open(path);
  } catch (const sapiens::SafetensorsError& e) {
    return e.what();
  }
  return {};
}

}  // namespace

using sapiens::test::FileSizeLimit;

class TestSafetensors : public QObject {
  Q_OBJECT

 private Q_SLOTS:
  void malformedFilesAreRefused_data();
  void malformedFilesAreRefused();
  void missingFileAndDirectoryAreRefused();
  void unreadableFileIsRefused();
  void everyDtypeRoundTrips();
  void headerIsPaddedToEightBytes();
  void alignedEntryIsMappedWithoutCopy();
  void unalignedEntryIsCopied();
  void boolBytesAreNormalised();
  void bf16ToF32IsExact();
  void f16ToF32IsExact();
  void goldenBackboneReads();
  void goldenBf16MatchesRoundedF32();
  void saveRefusesDuplicateNames();
  void saveRefusesUnsupportedDtype();
  void failedSaveKeepsPreviousFile();
};

void TestSafetensors::malformedFilesAreRefused_data() {
  QTest::addColumn<std::string>("bytes");
  QTest::addColumn<QStringList>("expected");

  const std::string w4 = std::string(4, '\0');
  QTest::newRow("empty file") << std::string() << QStringList{"file is empty"};
  QTest::newRow("shorter than 8 bytes")
      << std::string("\x01\x02\x03\x04\x05", 5)
      << QStringList{"file is 5 bytes", "shorter than the 8-byte header length"};
  QTest::newRow("absurd header length")
      << lengthPrefix(200000000) + "{}" << QStringList{"header length 200000000", "absurd", "100 MB"};
  QTest::newRow("header length beyond the file")
      << lengthPrefix(1000) + "{}" << QStringList{"header length 1000", "beyond the file", "only 2 bytes"};
  QTest::newRow("header not JSON") << craft("{\"w\": ") << QStringList{"header is not valid JSON"};
  QTest::newRow("header not an object")
      << craft("[1, 2]") << QStringList{"header is not a JSON object", "array"};
  QTest::newRow("entry not an object")
      << craft("{\"w\": [1]}") << QStringList{"tensor 'w'", "entry is not a JSON object"};
  QTest::newRow("missing dtype") << craft("{\"w\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", w4)
                                 << QStringList{"tensor 'w'", "missing field 'dtype'"};
  QTest::newRow("dtype not a string")
      << craft("{\"w\": {\"dtype\": 4, \"shape\": [1], \"data_offsets\": [0, 4]}}", w4)
      << QStringList{"tensor 'w'", "field 'dtype' is not a string"};
  QTest::newRow("unknown dtype")
      << craft("{\"w\": {\"dtype\": \"F8_E4M3\", \"shape\": [4], \"data_offsets\": [0, 4]}}", w4)
      << QStringList{"tensor 'w'", "unknown dtype 'F8_E4M3'"};
  QTest::newRow("missing shape") << craft("{\"w\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}", w4)
                                 << QStringList{"tensor 'w'", "missing field 'shape'"};
  QTest::newRow("shape not an array") << craft("{" + f32Entry("w", "4", 0, 4) + "}", w4)
                                      << QStringList{"tensor 'w'", "field 'shape' is not an array"};
  QTest::newRow("shape dimension not an integer")
      << craft("{" + f32Entry("w", "[2.5]", 0, 4) + "}", w4) << QStringList{"dimension 0 is not an integer"};
  QTest::newRow("negative shape dimension") << craft("{" + f32Entry("w", "[2, -3]", 0, 4) + "}", w4)
                                            << QStringList{"tensor 'w'", "negative dimension -3"};
  QTest::newRow("element count overflows int64")
      << craft("{" + f32Entry("w", "[4294967296, 4294967296]", 0, 4) + "}", w4)
      << QStringList{"tensor 'w'", "[4294967296, 4294967296]", "more elements than fit in int64"};
  QTest::newRow("byte size overflows 64 bits")
      << craft("{" + f32Entry("w", "[4611686018427387904]", 0, 4) + "}", w4)
      << QStringList{"tensor 'w'", "needs more bytes than fit in 64 bits"};
  QTest::newRow("missing data_offsets") << craft("{\"w\": {\"dtype\": \"F32\", \"shape\": [1]}}", w4)
                                        << QStringList{"tensor 'w'", "missing field 'data_offsets'"};
  QTest::newRow("three data_offsets")
      << craft("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4, 8]}}", w4)
      << QStringList{"tensor 'w'", "data_offsets must be two non-negative integers", "[0,4,8]"};
  QTest::newRow("negative data_offsets")
      << craft("{\"w\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [-4, 0]}}", w4)
      << QStringList{"tensor 'w'", "data_offsets must be two non-negative integers", "[-4,0]"};
  QTest::newRow("data_offsets begin > end")
      << craft("{" + f32Entry("w", "[1]", 8, 4) + "}", std::string(8, '\0'))
      << QStringList{"tensor 'w'", "data_offsets [8, 4)", "begin > end"};
  QTest::newRow("data_offsets outside the data area")
      << craft("{" + f32Entry("w", "[4]", 0, 16) + "}", std::string(8, '\0'))
      << QStringList{"tensor 'w'", "data_offsets [0, 16)", "outside the data area of 8 bytes"};
  QTest::newRow("byte length does not match the shape")
      << craft("{" + f32Entry("blocks.0.attn.wq.weight", "[5, 6]", 0, 100) + "}", std::string(100, '\0'))
      << QStringList{
             "tensor 'blocks.0.attn.wq.weight': data_offsets [0, 100) hold 100 bytes but shape [5, 6] x "
             "F32 needs 120"};
  QTest::newRow("overlapping regions")
      << craft("{" + f32Entry("a", "[2]", 0, 8) + ", " + f32Entry("b", "[2]", 4, 12) + "}",
               std::string(12, '\0'))
      << QStringList{"tensor 'b' at [4, 12) overlaps tensor 'a' at [0, 8)"};
  QTest::newRow("gap between regions")
      << craft("{" + f32Entry("a", "[1]", 0, 4) + ", " + f32Entry("b", "[1]", 8, 12) + "}",
               std::string(12, '\0'))
      << QStringList{"gap in the data area", "bytes [4, 8)", "before tensor 'b'"};
  QTest::newRow("trailing bytes after the last tensor")
      << craft("{" + f32Entry("a", "[1]", 0, 4) + "}", std::string(8, '\0'))
      << QStringList{"trailing bytes", "holds 8 bytes", "end at 4"};
  QTest::newRow("duplicate tensor name")
      << craft("{" + f32Entry("w", "[1]", 0, 4) + ", " + f32Entry("w", "[1]", 4, 8) + "}",
               std::string(8, '\0'))
      << QStringList{"duplicate tensor name 'w'"};
  QTest::newRow("duplicate field inside an entry")
      << craft("{\"w\": {\"dtype\": \"F32\", \"dtype\": \"I32\", \"shape\": [1], \"data_offsets\": [0, 4]}}",
               w4)
      << QStringList{"duplicate key 'dtype'", "entry 'w'"};
  QTest::newRow("__metadata__ not an object")
      << craft("{\"__metadata__\": [\"pt\"]}")
      << QStringList{"__metadata__ is not an object of strings", "array"};
  QTest::newRow("__metadata__ value not a string")
      << craft("{\"__metadata__\": {\"format\": 1}}")
      << QStringList{"__metadata__ value of key 'format' is not a string", "number"};
}

void TestSafetensors::malformedFilesAreRefused() {
  QFETCH(std::string, bytes);
  QFETCH(QStringList, expected);
  QTemporaryDir dir;
  QVERIFY(dir.isValid());
  const std::string path = dir.filePath("model.safetensors").toStdString();
  writeBytes(path, bytes);

  std::string message;
  try {
    sapiens::SafetensorsFile::open(path);
    QFAIL("the malformed file was accepted");
  } catch (const sapiens::SafetensorsError& e) {
    message = e.what();
    QCOMPARE(e.path(), path);
  }
  QVERIFY2(message.rfind(path + ": ", 0) == 0, message.c_str());
  for (const QString& words : expected) {
    QVERIFY2(message.find(words.toStdString()) != std::string::npos,
             ("expected \"" + words.toStdString() + "\" in: " + message).c_str());
  }
}

void TestSafetensors::missingFileAndDirectoryAreRefused() {
  QTemporaryDir dir;
  const std::string missing = dir.filePath("absent.safetensors").toStdString();
  std::string message = openError(missing);
  QVERIFY2(message.find(missing) != std::string::npos, message.c_str());
  QVERIFY2(message.find("No such file or directory") != std::string::npos, message.c_str());

  message = openError(dir.path().toStdString());
  QVERIFY2(message.find(dir.path().toStdString()) != std::string::npos, message.c_str());
  QVERIFY2(message.find("is a directory") != std::string::npos, message.c_str());
}

void TestSafetensors::unreadableFileIsRefused() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("locked.safetensors").toStdString();
  writeBytes(path, craft("{}"));
  QVERIFY(chmod(path.c_str(), 0) == 0);
  if (geteuid() != 0) {
    const std::string message = openError(path);
    QVERIFY2(message.find("Permission denied") != std::string::npos, message.c_str());
    return;
  }
  // Root ignores permission bits: try again in a child process that gave up root.
  QVERIFY(chmod(dir.path().toUtf8().constData(), 0755) == 0);
  int pipeFds[2];
  QVERIFY(pipe(pipeFds) == 0);
  const pid_t child = fork();
  QVERIFY(child >= 0);
  if (child == 0) {
    close(pipeFds[0]);
    std::string message = "could not drop root";
    if (setgid(65534) == 0 && setuid(65534) == 0) message = openError(path);
    const ssize_t written = write(pipeFds[1], message.data(), message.size());
    _exit(written == static_cast<ssize_t>(message.size()) ? 0 : 1);
  }
  close(pipeFds[1]);
  std::string message;
  char buffer[512];
  for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, n);
  close(pipeFds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  QVERIFY(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  QVERIFY2(message.find(path) != std::string::npos, message.c_str());
  QVERIFY2(message.find("Permission denied") != std::string::npos, message.c_str());
}

void TestSafetensors::everyDtypeRoundTrips() {
  at::manual_seed(7);
  const sapiens::NamedTensors tensors = {
      {"f64", at::randn({2, 3}, at::kDouble)},
      {"f32.transposed", at::randn({4, 5}).t()},  // not contiguous: saved in logical order
      {"f16", at::randn({7}).to(at::kHalf)},
      {"bf16", at::randn({2, 2, 2}).to(at::kBFloat16)},
      {"i64", at::tensor(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), -1, 0,
                                                   std::numeric_limits<std::int64_t>::max()})},
      {"i32", at::arange(-5, 5, at::kInt)},
      {"i16", at::tensor(std::vector<std::int16_t>{-32768, 0, 32767})},
      {"i8", at::arange(-128, 128, at::kChar)},
      {"u8", at::arange(0, 256, at::kByte).reshape({16, 16})},
      {"bool", at::tensor(std::vector<std::int64_t>{1, 0, 0, 1, 1}).to(at::kBool)},
      {"scalar", at::scalar_tensor(3.5, at::kFloat)},
      {"empty", at::empty({0, 3}, at::kFloat)},
  };
  const std::map<std::string, std::string> metadata = {{"format", "pt"}, {"note", "h\u00e9llo \u00fcnicode"}};
  QTemporaryDir dir;
  const std::string path = dir.filePath("all.safetensors").toStdString();
  sapiens::saveSafetensors(path, tensors, metadata);

  const auto file = sapiens::SafetensorsFile::open(path);
  QCOMPARE(file.metadata(), metadata);
  QCOMPARE(file.tensors().size(), tensors.size());
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& [name, original] = tensors[i];
    QCOMPARE(file.tensors()[i].name, name);  // file order = the order given
    const sapiens::TensorEntry* entry = file.find(name);
    QVERIFY2(entry, name.c_str());
    QCOMPARE(entry->dtype, sapiens::toStDType(original.scalar_type()));
    at::Tensor loaded = sapiens::loadTensor(file, *entry);
    QCOMPARE(loaded.scalar_type(), original.scalar_type());
    QCOMPARE(loaded.sizes().vec(), original.sizes().vec());
    QVERIFY2(at::equal(loaded, original), name.c_str());
  }
  QVERIFY(file.find("absent") == nullptr);
}

void TestSafetensors::headerIsPaddedToEightBytes() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("padded.safetensors").toStdString();
  sapiens::saveSafetensors(path, {{"abc", at::ones({3}, at::kFloat)}});
  const std::string bytes = readBytes(path);
  std::uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = (headerLength << 8) | static_cast<unsigned char>(bytes[i]);
  QCOMPARE(headerLength % 8, 0u);
  QCOMPARE(bytes.size(), 8 + headerLength + 12);
  const std::string header = bytes.substr(8, headerLength);
  QVERIFY(header.find("\"abc\"") != std::string::npos);
  QVERIFY(header.find("__metadata__") == std::string::npos);  // absent when empty
  QCOMPARE(header.back() == ' ' || header.back() == '}', true);
}

void TestSafetensors::alignedEntryIsMappedWithoutCopy() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("weights.safetensors").toStdString();
  const at::Tensor original = at::randn({8, 16});
  sapiens::saveSafetensors(path, {{"w", original}});

  at::Tensor aliased;
  {
    const auto file = sapiens::SafetensorsFile::open(path);
    const sapiens::TensorEntry& entry = *file.find("w");
    aliased = sapiens::loadTensor(file, entry);
    QCOMPARE(static_cast<const void*>(aliased.data_ptr()), static_cast<const void*>(file.data(entry)));
    const std::byte* mapped = static_cast<const std::byte*>(file.mappingOwner().get());
    QVERIFY(file.data(entry) >= mapped && file.data(entry) + entry.byteSize() <= mapped + file.fileSize());

    const at::Tensor converted = sapiens::loadTensor(file, entry, at::kDouble);
    QVERIFY(converted.data_ptr() != aliased.data_ptr());
    QVERIFY(at::equal(converted, original.to(at::kDouble)));
  }
  // The tensor shares the mapping: still readable after the file object is gone.
  QVERIFY(at::equal(aliased, original));
}

void TestSafetensors::unalignedEntryIsCopied() {
  const std::vector<float> values = {1.5f, -2.0f, 3.25f};
  const std::string header = "{\"a\": {\"dtype\": \"U8\", \"shape\": [1], \"data_offsets\": [0, 1]}, " +
                             f32Entry("b", "[3]", 1, 13) + "}";
  QTemporaryDir dir;
  const std::string path = dir.filePath("unaligned.safetensors").toStdString();
  writeBytes(path, craftAligned(header, std::string(1, '\x07') + bytesOf(values)));

  const auto file = sapiens::SafetensorsFile::open(path);
  const sapiens::TensorEntry& entry = *file.find("b");
  QVERIFY(reinterpret_cast<std::uintptr_t>(file.data(entry)) % 4 != 0);
  const at::Tensor loaded = sapiens::loadTensor(file, entry);
  QVERIFY(static_cast<const void*>(loaded.data_ptr()) != static_cast<const void*>(file.data(entry)));
  QCOMPARE(reinterpret_cast<std::uintptr_t>(loaded.data_ptr()) % alignof(float), 0u);
  QVERIFY(at::equal(loaded, at::tensor(std::vector<float>(values))));
  QCOMPARE(sapiens::loadTensor(file, *file.find("a")).item<std::uint8_t>(), 7);
}

void TestSafetensors::boolBytesAreNormalised() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("bool.safetensors").toStdString();
  writeBytes(path, craft("{\"m\": {\"dtype\": \"BOOL\", \"shape\": [3], \"data_offsets\": [0, 3]}}",
                         std::string("\x00\x01\x02", 3)));
  const auto file = sapiens::SafetensorsFile::open(path);
  const at::Tensor mask = sapiens::loadTensor(file, *file.find("m"));
  QCOMPARE(mask.scalar_type(), at::kBool);
  QVERIFY(at::equal(mask.to(at::kByte), at::tensor(std::vector<std::uint8_t>{0, 1, 1})));
}

void TestSafetensors::bf16ToF32IsExact() {
  // 1, -3, 1/3 rounded, the largest finite bf16, the smallest subnormal, -inf.
  const std::vector<std::uint16_t> bits = {0x3F80, 0xC040, 0x3EAB, 0x7F7F, 0x0001, 0xFF80};
  QTemporaryDir dir;
  const std::string path = dir.filePath("bf16.safetensors").toStdString();
  writeBytes(path, craftAligned("{\"x\": {\"dtype\": \"BF16\", \"shape\": [6], \"data_offsets\": [0, 12]}}",
                                bytesOf(bits)));
  const auto file = sapiens::SafetensorsFile::open(path);
  const at::Tensor converted = sapiens::loadTensor(file, *file.find("x"), at::kFloat);
  QCOMPARE(converted.scalar_type(), at::kFloat);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    const float value = converted[static_cast<std::int64_t>(i)].item<float>();
    std::uint32_t got = 0;
    std::memcpy(&got, &value, sizeof got);
    QCOMPARE(got, static_cast<std::uint32_t>(bits[i]) << 16);  // bf16 is the top half of an f32
  }
}

void TestSafetensors::f16ToF32IsExact() {
  const std::vector<std::uint16_t> bits = {0x3C00, 0xC000, 0x7BFF, 0x0400, 0x0001, 0x7C00, 0x3555};
  const std::vector<float> expected = {
      1.0f, -2.0f, 65504.0f, std::ldexp(1.0f, -14), std::ldexp(1.0f, -24), INFINITY, 0.333251953125f};
  QTemporaryDir dir;
  const std::string path = dir.filePath("f16.safetensors").toStdString();
  writeBytes(path, craftAligned("{\"x\": {\"dtype\": \"F16\", \"shape\": [7], \"data_offsets\": [0, 14]}}",
                                bytesOf(bits)));
  const auto file = sapiens::SafetensorsFile::open(path);
  const at::Tensor converted = sapiens::loadTensor(file, *file.find("x"), at::kFloat);
  for (std::size_t i = 0; i < bits.size(); ++i) {
    QCOMPARE(converted[static_cast<std::int64_t>(i)].item<float>(), expected[i]);
  }
}

void TestSafetensors::goldenBackboneReads() {
  const auto file =
      sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/backbone/model.safetensors"));
  QCOMPARE(file.tensors().size(), 312u);
  QCOMPARE(file.metadata().at("format"), std::string("pt"));
  QCOMPARE(file.metadata().at("task"), std::string("backbone"));
  const sapiens::TensorEntry* patch = file.find("patch_embed.projection.weight");
  QVERIFY(patch);
  QCOMPARE(patch->dtype, sapiens::StDType::F32);
  QCOMPARE(patch->shape, (std::vector<std::int64_t>{32, 3, 16, 16}));
  for (const sapiens::TensorEntry& entry : file.tensors()) {
    QCOMPARE(entry.dtype, sapiens::StDType::F32);
    const at::Tensor tensor = sapiens::loadTensor(file, entry);
    QCOMPARE(static_cast<const void*>(tensor.data_ptr()), static_cast<const void*>(file.data(entry)));
    QVERIFY2(tensor.isfinite().all().item<bool>(), entry.name.c_str());
  }
}

void TestSafetensors::goldenBf16MatchesRoundedF32() {
  const auto f32 =
      sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/backbone/model.safetensors"));
  const auto bf16 =
      sapiens::SafetensorsFile::open(sapiens::test::fixture("golden/backbone_bf16/model.safetensors"));
  QCOMPARE(bf16.tensors().size(), f32.tensors().size());
  QCOMPARE(bf16.metadata().at("format"), std::string("pt"));
  for (const sapiens::TensorEntry& entry : bf16.tensors()) {
    QCOMPARE(entry.dtype, sapiens::StDType::BF16);
    const sapiens::TensorEntry* reference = f32.find(entry.name);
    QVERIFY2(reference, entry.name.c_str());
    QCOMPARE(entry.shape, reference->shape);
    const at::Tensor widened = sapiens::loadTensor(bf16, entry, at::kFloat);
    const at::Tensor rounded = sapiens::loadTensor(f32, *reference).to(at::kBFloat16).to(at::kFloat);
    QVERIFY2(at::equal(widened, rounded), entry.name.c_str());
  }
}

void TestSafetensors::saveRefusesDuplicateNames() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("dup.safetensors").toStdString();
  writeBytes(path, "previous contents");
  try {
    sapiens::saveSafetensors(path, {{"w", at::ones({2})}, {"b", at::ones({1})}, {"w", at::zeros({2})}});
    QFAIL("duplicate names were saved");
  } catch (const sapiens::SafetensorsError& e) {
    QVERIFY2(std::string(e.what()).find("tensor 'w': duplicate tensor name") != std::string::npos, e.what());
  }
  QCOMPARE(readBytes(path), std::string("previous contents"));
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
}

void TestSafetensors::saveRefusesUnsupportedDtype() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("complex.safetensors").toStdString();
  try {
    sapiens::saveSafetensors(path, {{"z", at::ones({2}, at::kComplexFloat)}});
    QFAIL("a complex tensor was saved");
  } catch (const sapiens::SafetensorsError& e) {
    QVERIFY2(std::string(e.what()).find("tensor 'z'") != std::string::npos, e.what());
    QVERIFY2(std::string(e.what()).find("cannot store the scalar type ComplexFloat") != std::string::npos,
             e.what());
  }
  QVERIFY(!QFile::exists(QString::fromStdString(path)));
}

void TestSafetensors::failedSaveKeepsPreviousFile() {
  QTemporaryDir dir;
  const std::string path = dir.filePath("model.safetensors").toStdString();
  sapiens::saveSafetensors(path, {{"small", at::arange(4, at::kFloat)}});
  const std::string previous = readBytes(path);
  std::string message;
  {
    FileSizeLimit limit(64 * 1024);
    try {
      sapiens::saveSafetensors(path, {{"large", at::zeros({1 << 20}, at::kFloat)}});
    } catch (const sapiens::SafetensorsError& e) {
      message = e.what();
    }
  }
  QVERIFY2(message.find(path) != std::string::npos, message.c_str());
  QVERIFY2(message.find("File too large") != std::string::npos, message.c_str());
  QCOMPARE(readBytes(path), previous);
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"model.safetensors"});
}

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
