# Warnings for our own targets; MINFER_WERROR (the dev presets) makes them errors.
function(minfer_warnings target)
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow
        -Wnon-virtual-dtor -Wold-style-cast -Wcast-align)
    if(MINFER_WERROR)
        target_compile_options(${target} PRIVATE -Werror)
    endif()
    if(MINFER_SANITIZE)
        target_compile_options(${target} PUBLIC -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
        target_link_options(${target} PUBLIC -fsanitize=address,undefined)
    endif()
endfunction()
