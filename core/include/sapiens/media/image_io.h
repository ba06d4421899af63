#pragma once
// Still images from disk, as the models and views expect them: 8-bit, 3-channel BGR (what cv::imread
// gives the official Python demos), with the EXIF orientation applied.

#include "sapiens/media/media_error.h"

#include <opencv2/core/mat.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace sapiens {

/// Images with more pixels than this are refused before decoding (16384 x 16384; 768 MB as BGR): the size
/// is read from the header of PNG, JPEG, BMP, TIFF, EXR, PNM/PAM/PFM, Radiance HDR, Sun raster and JPEG
/// 2000 files (the last ones' decoders would otherwise allocate what a 30-byte header claims).
inline constexpr std::uint64_t kMaxImagePixels = std::uint64_t{1} << 28;
/// The limit for float pictures (EXR, Radiance HDR, PFM: 8192 x 8192), which decode to 12 bytes a pixel
/// before the conversion to 8 bits (768 MB at this limit; a 1 KB EXR claiming 2^28 pixels asked for 3 GB).
inline constexpr std::uint64_t kMaxFloatImagePixels = std::uint64_t{1} << 26;

/// Reads an image as CV_8UC3 BGR. Grayscale is expanded, alpha dropped, 16-bit scaled down (as
/// cv::imread does), float formats (EXR, Radiance HDR, PFM) clamped to [0, 1] and sRGB-encoded.
/// PNG, JPEG, BMP, TIFF and EXR headers are checked against kMaxImagePixels before anything is
/// decoded. A JPEG without its end-of-image marker is refused as truncated (libjpeg would fill the missing
/// rows grey without an error). Throws MediaError naming the file: missing, a folder, unreadable, empty,
/// not an image, truncated or too large.
cv::Mat readImageBgr(const std::string& path);

/// readImageBgr's checks and conversions, but at most `maxSide` pixels wide and high (aspect kept; never
/// enlarged). JPEGs are decoded at a reduced scale, so this is much faster than reading and resizing.
cv::Mat readImageThumbnailBgr(const std::string& path, int maxSide);

/// True when the file name ends in an image extension listImages picks up (case-insensitive):
/// png jpg jpeg bmp tif tiff webp exr.
bool hasImageExtension(const std::string& path);

/// Image files in `folder` (and its sub-folders when `recursive`), chosen by extension, sorted by
/// path ignoring case. Hidden files and folders (name starting with '.') are skipped. Throws MediaError when
/// `folder` is missing or not a folder.
std::vector<std::string> listImages(const std::string& folder, bool recursive);

}  // namespace sapiens
