# Every third-party package, found once. Debian 12 packages (scripts/install-deps) provide them all;
# a CUDA build points CMAKE_PREFIX_PATH at the official LibTorch instead of Debian's.
find_package(Torch REQUIRED)
# ATen's at::parallel_for is an inline template that runs its loop on one thread unless the calling
# file is compiled with OpenMP (_OPENMP), whatever LibTorch itself was built with.
find_package(OpenMP COMPONENTS CXX)
if(NOT OpenMP_CXX_FOUND)
  message(WARNING "OpenMP not found: our at::parallel_for loops (attention, softmax, seg labels) will run on one thread")
endif()
find_package(nlohmann_json 3 REQUIRED)
find_package(spdlog REQUIRED)
find_package(CLI11 QUIET CONFIG)
if(NOT CLI11_FOUND AND EXISTS /usr/include/CLI/CLI.hpp)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
endif()

# The official LibTorch 2.x ships its own fmt headers (a newer fmt) in its include folder, which comes
# before the system's on the command line, so spdlog would be compiled against the wrong fmt. A folder of
# our own that holds only a link to the fmt that spdlog was built with goes in front of both.
if(TARGET fmt::fmt)
  get_target_property(spdlog_fmt_include fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  list(GET spdlog_fmt_include 0 spdlog_fmt_include)
  foreach(torch_include ${TORCH_INCLUDE_DIRS})
    if(EXISTS "${torch_include}/fmt/core.h" AND NOT torch_include STREQUAL spdlog_fmt_include)
      set(SAPIENS_FMT_FIRST_DIR "${CMAKE_BINARY_DIR}/fmt-first")
      file(MAKE_DIRECTORY "${SAPIENS_FMT_FIRST_DIR}")
      file(CREATE_LINK "${spdlog_fmt_include}/fmt" "${SAPIENS_FMT_FIRST_DIR}/fmt" SYMBOLIC)
      message(STATUS "LibTorch ships its own fmt (${torch_include}/fmt); spdlog's, from ${spdlog_fmt_include}, goes first")
      break()
    endif()
  endforeach()
endif()

# Torch's CMake config leaks -D_GLIBCXX_USE_CXX11_ABI and include paths through TORCH_CXX_FLAGS;
# the imported `torch` target already carries both, so use the target only.
set(SAPIENS_TORCH_HAS_CUDA OFF)
if(TORCH_CUDA_LIBRARIES OR TARGET torch_cuda)
  set(SAPIENS_TORCH_HAS_CUDA ON)
endif()
message(STATUS "LibTorch ${Torch_VERSION} (CUDA: ${SAPIENS_TORCH_HAS_CUDA})")
option(SAPIENS_REQUIRE_CUDA "Stop unless the LibTorch found has CUDA (tools/gpu-check.sh sets it)" OFF)
if(SAPIENS_REQUIRE_CUDA AND NOT SAPIENS_TORCH_HAS_CUDA)
  message(FATAL_ERROR "SAPIENS_REQUIRE_CUDA: the LibTorch found (${Torch_DIR}, version ${Torch_VERSION}) has no "
                      "CUDA. Point CMAKE_PREFIX_PATH at a CUDA LibTorch 2.x, e.g. the one of a CUDA PyTorch: "
                      "python3 -c 'import torch; print(torch.utils.cmake_prefix_path)'")
endif()

# Optional: checkpoint downloads (sapiens-cli models download). Without libcurl they are switched off.
option(SAPIENS_WITH_CURL "Download checkpoints with libcurl when it is found" ON)
set(SAPIENS_HAVE_CURL OFF)
if(SAPIENS_WITH_CURL)
  find_package(CURL QUIET)
  if(CURL_FOUND)
    set(SAPIENS_HAVE_CURL ON)
  endif()
endif()
message(STATUS "Checkpoint downloads (libcurl): ${SAPIENS_HAVE_CURL}")
# SHA-256 of checkpoints (downloads checked against the hub's hash, `models verify --hash`).
find_package(OpenSSL REQUIRED COMPONENTS Crypto)

if(SAPIENS_BUILD_MEDIA)
  find_package(OpenCV REQUIRED COMPONENTS core imgproc imgcodecs objdetect video)
  # Large overlays are written a band of rows at a time (export/png_by_rows.cpp).
  find_package(PNG REQUIRED)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(FFMPEG REQUIRED IMPORTED_TARGET libavformat libavcodec libswscale libavutil)
endif()

if(SAPIENS_BUILD_GUI)
  find_package(Qt6 REQUIRED COMPONENTS Core Gui Widgets OpenGL OpenGLWidgets Charts)  # Charts: the Motion dock
  # Only the VTK modules that do not drag Debian's Qt 5 build of VTK's Qt support in.
  find_package(VTK REQUIRED COMPONENTS CommonCore CommonDataModel RenderingCore RenderingOpenGL2
                                       InteractionStyle RenderingFreeType IOPLY)
endif()
if(SAPIENS_BUILD_TESTS)
  find_package(Qt6 REQUIRED COMPONENTS Core Test)
  if(NOT SAPIENS_BUILD_GUI)
    find_package(VTK QUIET COMPONENTS CommonCore CommonDataModel IOPLY)
  endif()
endif()
