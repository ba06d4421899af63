# Generates the man pages from the programs' own --help (help2man), at build time:
#   sapiens-cli.1 and one sapiens-cli-<sub-command>.1 per sub-command listed by `sapiens-cli --help`,
#   sapiens-studio.1 when STUDIO is given; each gzipped (-9n, as Debian wants) into OUT_DIR.
# cmake -DHELP2MAN=... -DCLI=... [-DSTUDIO=...] -DVERSION=... -DOUT_DIR=... -P GenerateManPages.cmake
foreach(var HELP2MAN CLI VERSION OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "GenerateManPages.cmake: ${var} is not set")
  endif()
endforeach()

# No re-exec, no log file in the user's home, no GUI.
set(ENV{SAPIENS_NO_REEXEC} 1)
set(ENV{OMP_WAIT_POLICY} PASSIVE)
set(ENV{SAPIENS_LOG_DIR} "${OUT_DIR}/logs")
set(ENV{QT_QPA_PLATFORM} offscreen)
if(NOT DEFINED ENV{ASAN_OPTIONS})
  set(ENV{ASAN_OPTIONS} detect_leaks=0)  # the asan preset: a leak report at exit must not fail the build
endif()
set(ENV{XDG_RUNTIME_DIR} "${OUT_DIR}/runtime")
file(MAKE_DIRECTORY "${OUT_DIR}/runtime")
file(CHMOD "${OUT_DIR}/runtime" DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
if(NOT DEFINED ENV{SOURCE_DATE_EPOCH})
  # Reproducible pages: the date printed in them does not change from build to build.
  set(ENV{SOURCE_DATE_EPOCH} 1767225600)  # 2026-01-01
endif()

file(GLOB old "${OUT_DIR}/*.1" "${OUT_DIR}/*.1.gz")
if(old)
  file(REMOVE ${old})
endif()

execute_process(COMMAND "${CLI}" --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "GenerateManPages.cmake: '${CLI} --help' failed (${rc})")
endif()

# Sub-commands: the lines "  NAME   description" after "Subcommands:".
string(REGEX REPLACE ".*\nSubcommands:\n" "" subcommand_block "${help}")
string(REPLACE "\n" ";" subcommand_lines "${subcommand_block}")
set(subcommands "")
foreach(line IN LISTS subcommand_lines)
  if(line MATCHES "^  ([a-z][a-z0-9-]*)  +(.*)$")
    list(APPEND subcommands "${CMAKE_MATCH_1}")
    set(summary_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  endif()
endforeach()
if(NOT subcommands)
  message(FATAL_ERROR "GenerateManPages.cmake: no sub-commands found in '${CLI} --help'")
endif()

# help2man: NAME, SYNOPSIS, DESCRIPTION, OPTIONS from --help; a SEE ALSO section from an include file.
# page: output base name; title: the .TH title; program: what help2man runs; name: the NAME line.
function(generate_page page title program name see_also)
  set(include_file "${OUT_DIR}/${page}.h2m")
  file(WRITE "${include_file}" "[SEE ALSO]\n${see_also}\n")
  execute_process(
    COMMAND "${HELP2MAN}" --no-info --no-discard-stderr --section=1 "--version-string=${VERSION}"
            "--manual=User Commands" "--source=Sapiens2 Studio ${VERSION}" "--name=${name}"
            "--include=${include_file}" "--output=${OUT_DIR}/${page}.1" "${program}"
    RESULT_VARIABLE rc ERROR_VARIABLE err)
  file(REMOVE "${include_file}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "GenerateManPages.cmake: help2man failed for '${program}' (${rc}): ${err}")
  endif()
  # help2man titles and names a sub-command's page after the program ("sapiens-cli run"); title and name
  # it after the page ("sapiens-cli-run"), as whatis and lintian expect.
  file(READ "${OUT_DIR}/${page}.1" roff)
  string(TOUPPER "${title}" upper)
  string(REGEX REPLACE "\n\\.TH [^\"]+ \"1\"" "\n.TH ${upper} \"1\"" roff "${roff}")
  string(REGEX REPLACE "\n\\.SH NAME\n[^\n]* \\\\- " "\n.SH NAME\n${page} \\\\- " roff "${roff}")
  file(WRITE "${OUT_DIR}/${page}.1" "${roff}")
  execute_process(COMMAND gzip -9nf "${OUT_DIR}/${page}.1" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "GenerateManPages.cmake: gzip failed for ${page}.1")
  endif()
endfunction()

set(see_also_pages "")
foreach(sub IN LISTS subcommands)
  list(APPEND see_also_pages "sapiens-cli-${sub}")
endforeach()
if(STUDIO)
  list(APPEND see_also_pages sapiens-studio)
endif()
list(TRANSFORM see_also_pages PREPEND ".BR ")
list(TRANSFORM see_also_pages APPEND " (1)")
list(JOIN see_also_pages ",\n" cli_see_also)
string(REGEX REPLACE "^([^\n]*) - ([^\n]*)\n.*" "\\2" cli_summary "${help}")
generate_page(sapiens-cli sapiens-cli "${CLI}" "${cli_summary}" "${cli_see_also}")
foreach(sub IN LISTS subcommands)
  generate_page(sapiens-cli-${sub} sapiens-cli-${sub} "${CLI} ${sub}" "${summary_${sub}}" ".BR sapiens-cli (1)")
endforeach()
if(STUDIO)
  generate_page(sapiens-studio sapiens-studio "${STUDIO}"
                "desktop application for the Sapiens2 human-centric vision models" ".BR sapiens-cli (1)")
endif()
file(REMOVE_RECURSE "${OUT_DIR}/runtime" "${OUT_DIR}/logs")
list(LENGTH subcommands n)
set(studio_note "")
if(STUDIO)
  set(studio_note ", sapiens-studio")
endif()
message(STATUS "Man pages: sapiens-cli, ${n} sub-commands${studio_note} in ${OUT_DIR}")
