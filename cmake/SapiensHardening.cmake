# The hardening Debian builds every package with (dpkg-buildflags, hardening=+all), for every C and C++
# target of the tree: these binaries parse untrusted files (checkpoints, pictures, videos, label sets).
#   _FORTIFY_SOURCE=3 (2 where the compiler lacks __builtin_dynamic_object_size), only in optimised builds:
#     glibc's checks need the optimiser, and at -O0 its headers warn (an error under SAPIENS_WERROR)
#   -fstack-protector-strong, -fstack-clash-protection, -fcf-protection (x86's CET), PIE,
#   full RELRO (-z relro -z now)
# tests/package/deb_roundtrip.sh checks the result with hardening-check and lintian. The asan preset
# turns it off: AddressSanitizer brings its own checks and replaces the fortified functions.
option(SAPIENS_HARDENING "Build with the distribution's hardening flags (fortify, stack protector, PIE, RELRO)" ON)
if(NOT SAPIENS_HARDENING)
  message(STATUS "Hardening: off (SAPIENS_HARDENING)")
  return()
endif()

include(CheckCXXCompilerFlag)
include(CheckCXXSourceCompiles)
include(CheckPIESupported)

check_pie_supported(LANGUAGES C CXX)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)

set(sapiens_hardening_flags -fstack-protector-strong)
foreach(flag -fstack-clash-protection -fcf-protection)
  string(MAKE_C_IDENTIFIER "SAPIENS_HAS${flag}" flag_variable)
  check_cxx_compiler_flag(${flag} ${flag_variable})
  if(${flag_variable})
    list(APPEND sapiens_hardening_flags ${flag})
  endif()
endforeach()

check_cxx_source_compiles(
  "#if !defined(__has_builtin) || !__has_builtin(__builtin_dynamic_object_size)
   #error no dynamic object size
   #endif
   int main() { return 0; }"
  SAPIENS_HAS_FORTIFY_3)
if(SAPIENS_HAS_FORTIFY_3)
  set(sapiens_fortify_level 3)
else()
  set(sapiens_fortify_level 2)
endif()

# -U first: some toolchains (Ubuntu's) predefine _FORTIFY_SOURCE, and a second definition warns.
set(sapiens_optimised "$<CONFIG:Release,RelWithDebInfo,MinSizeRel>")
add_compile_options(
  "$<$<COMPILE_LANGUAGE:C,CXX>:${sapiens_hardening_flags}>"
  "$<$<AND:$<COMPILE_LANGUAGE:C,CXX>,${sapiens_optimised}>:-U_FORTIFY_SOURCE;-D_FORTIFY_SOURCE=${sapiens_fortify_level}>")
add_link_options("LINKER:-z,relro" "LINKER:-z,now")
message(STATUS "Hardening: ${sapiens_hardening_flags}, _FORTIFY_SOURCE=${sapiens_fortify_level} (optimised builds), "
               "PIE, -z relro -z now")
