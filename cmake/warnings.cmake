# Warnings for our own targets; MINFER_WERROR (the dev presets) makes them errors.
# (Sanitizers are not set here: see MINFER_SANITIZE in the top-level CMakeLists.txt.)
function(minfer_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow
        -Wnon-virtual-dtor -Wold-style-cast -Wcast-align)
    if(MINFER_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
endfunction()
