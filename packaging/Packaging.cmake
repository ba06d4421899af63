# Install layout and the Debian package (cpack -G DEB; tests/package/deb_roundtrip.sh checks it).
#   bin/sapiens-cli, bin/sapiens-studio
#   share/sapiens2-studio/{data,samples,shaders,demo-weights}     found next to the executable's ../share
#   share/applications/sapiens-studio.desktop, share/metainfo/org.sapiens2studio.Studio.metainfo.xml,
#   share/icons/hicolor/{16x16..256x256,scalable}/apps/sapiens-studio.*, share/man/man1/sapiens-*.1.gz
include(GNUInstallDirs)

# RPATH: the binaries link our libraries statically and everything else from the system, so the installed
# ones carry none (CMake drops the build tree's at install; CMAKE_INSTALL_RPATH stays empty). The package
# test checks that no RPATH/RUNPATH of an installed binary names the build or source tree.

set(SAPIENS_SHARE_DIR ${CMAKE_INSTALL_DATADIR}/sapiens2-studio)
# (The samples' README is the source tree's note; their licence is in the package's copyright file.)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/ DESTINATION ${SAPIENS_SHARE_DIR} PATTERN "README.md" EXCLUDE)
install(DIRECTORY ${SAPIENS_DEMO_WEIGHTS_DIR}/ DESTINATION ${SAPIENS_SHARE_DIR}/demo-weights)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/shaders/ DESTINATION ${SAPIENS_SHARE_DIR}/shaders)

set(CPACK_PACKAGE_CONTACT "Sapiens2 Studio maintainers <maintainers@sapiens2-studio.invalid>")
# The release of this version, for the AppStream metainfo and the package's changelog: bump with a release.
set(SAPIENS_RELEASE_DATE "2026-01-01")
set(SAPIENS_RELEASE_DATE_RFC2822 "Thu, 01 Jan 2026 00:00:00 +0000")

# share/doc/sapiens2-studio/changelog.gz (Debian policy for a native package), gzip -9n: reproducible.
set(SAPIENS_PACKAGE_DOC_DIR ${CMAKE_INSTALL_DATADIR}/doc/sapiens2-studio)
configure_file(${PROJECT_SOURCE_DIR}/packaging/changelog.in ${CMAKE_BINARY_DIR}/packaging/changelog @ONLY)
execute_process(COMMAND gzip -9nkf ${CMAKE_BINARY_DIR}/packaging/changelog RESULT_VARIABLE gzip_rc)
if(NOT gzip_rc EQUAL 0)
  message(FATAL_ERROR "gzip failed on ${CMAKE_BINARY_DIR}/packaging/changelog")
endif()
install(FILES ${CMAKE_BINARY_DIR}/packaging/changelog.gz DESTINATION ${SAPIENS_PACKAGE_DOC_DIR})
# Debian policy 12.5: every package ships its copyright file (machine-readable format).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/copyright DESTINATION ${SAPIENS_PACKAGE_DOC_DIR})

if(SAPIENS_BUILD_GUI)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/sapiens-studio.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
  configure_file(${PROJECT_SOURCE_DIR}/packaging/org.sapiens2studio.Studio.metainfo.xml
                 ${CMAKE_BINARY_DIR}/packaging/org.sapiens2studio.Studio.metainfo.xml @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/packaging/org.sapiens2studio.Studio.metainfo.xml
          DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
  # Icons: PNGs rendered from the SVG by packaging/icons/render-pngs (committed), and the SVG itself.
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/packaging/icons/hicolor DESTINATION ${CMAKE_INSTALL_DATADIR}/icons
          FILES_MATCHING PATTERN "*.png")
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/icons/sapiens-studio.svg
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
endif()

# Man pages, generated from the programs' --help by help2man (scripts/install-deps installs it; without it
# the build goes on without man pages and says so).
find_program(SAPIENS_HELP2MAN help2man)
if(SAPIENS_HELP2MAN)
  set(SAPIENS_MAN_DIR ${CMAKE_BINARY_DIR}/man)
  set(man_args -DHELP2MAN=${SAPIENS_HELP2MAN} -DCLI=$<TARGET_FILE:sapiens-cli> -DVERSION=${PROJECT_VERSION}
               -DOUT_DIR=${SAPIENS_MAN_DIR})
  set(man_depends sapiens-cli)
  if(SAPIENS_BUILD_GUI)
    list(APPEND man_args -DSTUDIO=$<TARGET_FILE:sapiens-studio>)
    list(APPEND man_depends sapiens-studio)
  endif()
  add_custom_command(
    OUTPUT ${CMAKE_BINARY_DIR}/man-pages.stamp
    COMMAND ${CMAKE_COMMAND} ${man_args} -P ${PROJECT_SOURCE_DIR}/packaging/GenerateManPages.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${CMAKE_BINARY_DIR}/man-pages.stamp
    DEPENDS ${man_depends} ${PROJECT_SOURCE_DIR}/packaging/GenerateManPages.cmake
    COMMENT "Generating the man pages from --help (help2man)"
    VERBATIM)
  add_custom_target(sapiens_man_pages ALL DEPENDS ${CMAKE_BINARY_DIR}/man-pages.stamp)
  install(DIRECTORY ${SAPIENS_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 FILES_MATCHING PATTERN "*.1.gz")
else()
  message(STATUS "help2man not found: no man pages (scripts/install-deps installs it)")
endif()

set(CPACK_PACKAGE_NAME "sapiens2-studio")
set(CPACK_PACKAGE_VENDOR "Sapiens2 Studio")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# Lines of at most 79 characters (Debian policy; lintian: extended-description-line-too-long).
set(CPACK_PACKAGE_DESCRIPTION
    "Runs Meta's Sapiens2 models (308-keypoint pose, 29-class body-part
segmentation, surface normals, albedo and metric pointmaps) on pictures,
folders, videos and cameras, on the CPU or a CUDA GPU, from the official
safetensors checkpoints. sapiens-studio is the desktop application,
sapiens-cli the command-line tool for batches, videos, sharded runs,
checkpoint downloads and fine-tuning.
The official checkpoints are not included; untrained demo weights are, so
that every task runs out of the box.")
set(CPACK_STRIP_FILES ON)
# Stripped as dh_strip strips an executable: CMake's strip keeps the compilers' .comment and .note
# sections (lintian: binary-has-unneeded-section). Runs after the binaries' own install rules (CMP0082).
set(sapiens_programs sapiens-cli)
if(SAPIENS_BUILD_GUI)
  list(APPEND sapiens_programs sapiens-studio)
endif()
install(CODE "
  if(CMAKE_INSTALL_DO_STRIP)
    foreach(program ${sapiens_programs})
      set(path \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/bin/\${program}\")
      execute_process(COMMAND \"${CMAKE_STRIP}\" --remove-section=.comment --remove-section=.note \"\${path}\"
                      RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR \"strip --remove-section=.comment failed on \${path}\")
      endif()
    endforeach()
  endif()")
# A note beside each tag lintian reports that is not ours to change (packaging/lintian-overrides).
install(FILES ${PROJECT_SOURCE_DIR}/packaging/lintian-overrides DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides
        RENAME sapiens2-studio)
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_PRIORITY "optional")
# Library dependencies are computed from the installed binaries by dpkg-shlibdeps; only what is loaded at
# run time without being linked is listed by hand (Qt's platform plugins for the window).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(SAPIENS_BUILD_GUI)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins")
endif()
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR "DEB")
include(CPack)
