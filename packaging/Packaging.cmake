# Install layout and the Debian package (cpack -G DEB).
include(GNUInstallDirs)

install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/ DESTINATION ${CMAKE_INSTALL_DATADIR}/sapiens2-studio)
install(DIRECTORY ${SAPIENS_DEMO_WEIGHTS_DIR}/ DESTINATION ${CMAKE_INSTALL_DATADIR}/sapiens2-studio/demo-weights)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/shaders/ DESTINATION ${CMAKE_INSTALL_DATADIR}/sapiens2-studio/shaders)
if(SAPIENS_BUILD_GUI)
  install(FILES ${PROJECT_SOURCE_DIR}/packaging/sapiens-studio.desktop
          DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
endif()

set(CPACK_PACKAGE_NAME "sapiens2-studio")
set(CPACK_PACKAGE_VENDOR "Sapiens2 Studio")
set(CPACK_PACKAGE_CONTACT "Sapiens2 Studio maintainers <maintainers@sapiens2-studio.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_DEBIAN_PACKAGE_SECTION "science")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_GENERATOR "DEB")
include(CPack)
