# Use ccache when it is installed: rebuilds after a branch switch cost seconds instead of minutes.
find_program(SAPIENS_CCACHE ccache)
if(SAPIENS_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER "${SAPIENS_CCACHE}")
  # Precompiled headers defeat ccache's direct mode unless it is told to trust them.
  set(ENV{CCACHE_SLOPPINESS} "pch_defines,time_macros,include_file_mtime,include_file_ctime")
  message(STATUS "ccache: ${SAPIENS_CCACHE}")
endif()
