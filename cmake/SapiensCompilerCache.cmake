# Use ccache when it is installed: rebuilds after a branch switch, and a fresh clone built on a machine
# that built the project before, cost seconds instead of minutes.
# The settings travel with every compile (an environment variable set here would reach only CMake
# itself): precompiled headers are uncacheable unless ccache is told to trust them, and a base folder
# makes the cache's keys independent of where the checkout lies.
find_program(SAPIENS_CCACHE ccache)
if(SAPIENS_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      "${CMAKE_COMMAND};-E;env;CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime;CCACHE_BASEDIR=${PROJECT_SOURCE_DIR};${SAPIENS_CCACHE}")
  message(STATUS "ccache: ${SAPIENS_CCACHE}")
endif()
