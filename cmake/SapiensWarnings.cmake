# sapiens_strict(target): warnings on, and errors in our own code (third-party headers are SYSTEM).
function(sapiens_strict target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor
                                           -Woverloaded-virtual -Wno-unused-parameter)
  if(SAPIENS_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  target_compile_definitions(${target} PRIVATE QT_NO_KEYWORDS)
endfunction()
