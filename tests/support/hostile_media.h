#pragma once
// A corpus of hostile pictures, written at test time into a folder: empty files, wrong extensions,
// truncated PNG and JPEG, 16-bit, grayscale and CMYK JPEG, an EXIF-rotated JPEG, headers claiming
// 100000 x 100000 pixels. Each entry says whether readImageBgr must decode it (and to what size) or refuse
// it (and with what words, besides the file's name). Header-only: the tests that include it link OpenCV.

#include "png_chunks.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>

#include <QByteArray>
#include <QFile>
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

namespace sapiens::test {

struct HostileImage {
  QString name;
  bool decodes = false;
  int width = 0;  ///< when it decodes: the upright size
  int height = 0;
  QString reason;  ///< when it does not: words the error must contain
};

namespace hostile {

// A structurally valid PNG (correct CRCs) whose IHDR claims width x height RGB pixels, with a tiny IDAT.
inline QByteArray pngClaiming(std::uint32_t width, std::uint32_t height) {
  const QByteArray ihdr =
      png::bigEndian32(width) + png::bigEndian32(height) + QByteArray("\x08\x02\x00\x00\x00", 5);
  return QByteArray("\x89PNG\r\n\x1a\n", 8) + png::chunk("IHDR", ihdr) +
         png::chunk("IDAT", QByteArray("\x78\x9c\x03\x00\x00\x00\x00\x01", 8)) + png::chunk("IEND", {});
}

inline QByteArray encoded(const char* extension, const cv::Mat& image, const std::vector<int>& params = {}) {
  std::vector<uchar> bytes;
  cv::imencode(extension, image, bytes, params);
  return QByteArray(reinterpret_cast<const char*>(bytes.data()), int(bytes.size()));
}

// Noise compresses badly, so a cut really loses rows.
inline cv::Mat noise(int width, int height) {
  cv::Mat image(height, width, CV_8UC3);
  cv::randu(image, 0, 255);
  return image;
}

// A JPEG with an EXIF APP1 segment holding only Orientation = `orientation`, inserted after SOI.
inline QByteArray jpegWithOrientation(const cv::Mat& image, int orientation) {
  const QByteArray tiff = QByteArray("II*\0\x08\0\0\0", 8) + QByteArray("\x01\0", 2) +
                          QByteArray("\x12\x01\x03\0\x01\0\0\0", 8) + char(orientation) + QByteArray(3, 0) +
                          QByteArray(4, 0);
  const QByteArray payload = QByteArray("Exif\0\0", 6) + tiff;
  const int length = int(payload.size()) + 2;
  const QByteArray app1 = QByteArray("\xFF\xE1", 2) + char(length >> 8) + char(length & 0xFF) + payload;
  QByteArray jpeg = encoded(".jpg", image, {cv::IMWRITE_JPEG_QUALITY, 95});
  jpeg.insert(2, app1);
  return jpeg;
}

// 16 x 8, Adobe CMYK (inverted, as Photoshop writes it): left half red, right half blue. OpenCV cannot
// write CMYK; these bytes came from libjpeg (in_color_space = JCS_CMYK, quality 95).
inline QByteArray cmykJpeg() {
  return QByteArray::fromHex(
      "ffd8ffee000e41646f626500640000000000ffdb00430002010101010102010101020202020204030202020205040403"
      "04060506060605060606070908060709070606080b08090a0a0a0a0a06080b0c0b0a0c090a0a0affc000140800080010"
      "044311004d11005911004b1100ffc4001f0000010501010101010100000000000000000102030405060708090a0bffc4"
      "00b5100002010303020403050504040000017d01020300041105122131410613516107227114328191a1082342b1c115"
      "52d1f02433627282090a161718191a25262728292a3435363738393a434445464748494a535455565758595a63646566"
      "6768696a737475767778797a838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2"
      "c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1f2f3f4f5f6f7f8f9faffda000e0443004d005900"
      "4b00003f00fdfcafe7febf9ffafdfcafe00e8afeff0028afffd9");
}

inline bool writeFile(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  return file.open(QIODevice::WriteOnly) && file.write(bytes) == bytes.size();
}

}  // namespace hostile

/// Writes the corpus into `folder` (every stem distinct) and describes it. Returns {} if a write failed.
inline std::vector<HostileImage> writeHostileImages(const QString& folder) {
  using namespace hostile;
  std::vector<HostileImage> corpus;
  bool ok = true;
  auto add = [&](const QString& name, const QByteArray& bytes, HostileImage expected) {
    expected.name = name;
    ok = ok && writeFile(folder + "/" + name, bytes);
    corpus.push_back(expected);
  };
  auto decodes = [](int width, int height) { return HostileImage{{}, true, width, height, {}}; };
  auto refused = [](const char* reason) { return HostileImage{{}, false, 0, 0, QString::fromUtf8(reason)}; };

  const cv::Mat picture = noise(40, 30);
  add("empty.png", {}, refused("file is empty"));
  add("empty_jpeg.jpg", {}, refused("file is empty"));
  add("png_named.jpg", encoded(".png", picture), decodes(40, 30));
  add("jpeg_named.png", encoded(".jpg", picture), decodes(40, 30));
  add("text_named.png", QByteArray("Not a picture, just some text.\n").repeated(20),
      refused("not a decodable image"));
  const QByteArray png = encoded(".png", noise(128, 96));
  add("truncated.png", png.left(png.size() / 2), refused("not a decodable image"));
  add("no_iend.png", png.left(png.size() - 12), refused("not a decodable image"));
  const QByteArray jpeg = encoded(".jpg", noise(128, 96));
  add("truncated.jpg", jpeg.left(jpeg.size() / 2), refused("truncated"));
  add("truncated_progressive.jpg",
      encoded(".jpg", noise(128, 96), {cv::IMWRITE_JPEG_PROGRESSIVE, 1}).left(jpeg.size() / 2),
      refused("truncated"));
  // Data after the end-of-image marker (as some phones append) is not truncation.
  add("trailing_data.jpg", jpeg + QByteArray(3000, '\x5a'), decodes(128, 96));
  add("gray16.png", encoded(".png", cv::Mat(10, 20, CV_16UC1, cv::Scalar(0x8000))), decodes(20, 10));
  add("gray.jpg", encoded(".jpg", cv::Mat(10, 20, CV_8UC1, cv::Scalar(90))), decodes(20, 10));
  add("cmyk.jpg", cmykJpeg(), decodes(16, 8));
  add("exif_rotated.jpg", jpegWithOrientation(picture, 8), decodes(30, 40));  // 8: 90 degrees anticlockwise
  add("huge_ihdr.png", pngClaiming(100000, 100000), refused("more than the limit"));
  add("zero_ihdr.png", pngClaiming(0, 0), refused(""));
  // Formats whose decoders allocate what the header says before reading a pixel; a header too long to
  // read the size from is refused too, and comments do not hide the size.
  add("huge_pam_after_comments_named.png",
      QByteArray("P7\n") + QByteArray("# a comment line\n").repeated(100) +
          "WIDTH 100000\nHEIGHT 100000\nDEPTH 3\nMAXVAL 255\nTUPLTYPE RGB\nENDHDR\n",
      refused("more than the limit"));
  add("long_pam_header_named.png",
      QByteArray("P7\n") + QByteArray("TUPLTYPE RGB\n").repeated(40) +
          "WIDTH 100000\nHEIGHT 100000\nDEPTH 3\nMAXVAL 255\nENDHDR\n",
      refused("cannot be checked"));
  add("long_hdr_header_named.png",
      QByteArray("#?RADIANCE\n") + QByteArray("EXPOSURE=1.0\n").repeated(1100) +
          "FORMAT=32-bit_rle_rgbe\n\n-Y 100000 +X 100000\n",
      refused("cannot be checked"));
  return ok ? corpus : std::vector<HostileImage>{};
}

}  // namespace sapiens::test
