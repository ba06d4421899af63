# Precompiled headers, where they pay.
# LibTorch's headers cost ~9 CPU-seconds a translation unit, so the files that reach them share one
# precompiled copy (core/src/torch_pch.h). A file that reaches no LibTorch header is compiled without it:
# loading the precompiled ATen and generating code for what it declares made such files two to three
# times slower (command_merge.cpp 24 s with it, 11 s without; converted_keypoints.cpp 10.6 vs 6.7 s).
# Whether a file reaches LibTorch is found at configure time by following its quoted includes through
# the project's folders (an include added later takes effect at the next configure; a stale answer only
# costs time, never correctness). The studio and the widgets, which may not include LibTorch at all
# (tools/check-include-graph), share a precompiled set of the Qt headers they use most.

# Sets `out` to TRUE when `file` includes a LibTorch header (ATen, c10, torch) directly or through the
# project's own headers. Answers are kept per file for the whole configure run.
function(sapiens_reaches_torch file out)
  get_property(known GLOBAL PROPERTY "SAPIENS_REACHES_TORCH:${file}" SET)
  if(known)
    get_property(answer GLOBAL PROPERTY "SAPIENS_REACHES_TORCH:${file}")
    set(${out} ${answer} PARENT_SCOPE)
    return()
  endif()
  set_property(GLOBAL PROPERTY "SAPIENS_REACHES_TORCH:${file}" FALSE)  # an include cycle ends here
  file(STRINGS "${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  get_filename_component(folder "${file}" DIRECTORY)
  set(answer FALSE)
  foreach(line IN LISTS includes)
    if(line MATCHES "<(ATen|c10|torch)/")
      set(answer TRUE)
      break()
    endif()
    if(NOT line MATCHES "\"([^\"]+)\"")
      continue()
    endif()
    set(name "${CMAKE_MATCH_1}")
    foreach(base "${folder}" "${PROJECT_SOURCE_DIR}/core/include" "${PROJECT_SOURCE_DIR}/core/src")
      if(EXISTS "${base}/${name}")
        sapiens_reaches_torch("${base}/${name}" nested)
        set(answer ${nested})
        break()
      endif()
    endforeach()
    if(answer)
      break()
    endif()
  endforeach()
  set_property(GLOBAL PROPERTY "SAPIENS_REACHES_TORCH:${file}" ${answer})
  set(${out} ${answer} PARENT_SCOPE)
endfunction()

# The LibTorch precompiled header for the sources of `target` that reach LibTorch; the others skip it.
# Call from the folder that defines the target (source properties are per folder).
function(sapiens_torch_pch target)
  if(NOT SAPIENS_USE_PCH)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${PROJECT_SOURCE_DIR}/core/src/torch_pch.h)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(NOT source MATCHES "\\.(cpp|cc)$")
      continue()
    endif()
    get_filename_component(path "${source}" ABSOLUTE BASE_DIR "${source_dir}")
    sapiens_reaches_torch("${path}" reaches)
    if(NOT reaches)
      set_source_files_properties("${source}" PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()

# The Qt headers most of the studio's and the widgets' files include, precompiled once per target.
function(sapiens_qt_pch target)
  if(SAPIENS_USE_PCH)
    target_precompile_headers(${target} PRIVATE
      <QtCore/QObject> <QtCore/QString> <QtCore/QStringList> <QtCore/QTimer> <QtCore/QSettings>
      <QtCore/QFileInfo> <QtCore/QDir> <QtGui/QAction> <QtGui/QImage> <QtGui/QPainter>
      <QtWidgets/QWidget> <QtWidgets/QLabel> <QtWidgets/QPushButton> <QtWidgets/QBoxLayout>
      <QtWidgets/QComboBox> <QtWidgets/QMenu> <QtWidgets/QFileDialog> <QtWidgets/QMessageBox>
      <string> <vector> <memory> <functional>)
  endif()
endfunction()
