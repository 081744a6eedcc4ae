# cmake -P driver of the package tests. MODE=subdirectory: configure the consumer with
# MINFER_SOURCE_DIR (add_subdirectory of the checkout, library only). MODE=install: install the build
# BUILD_DIR into PREFIX (building TARGETS first, as `cmake --install` needs them), check what was
# installed, and configure the consumer with find_package(minfer) through CMAKE_PREFIX_PATH. Then, in
# both modes, build the consumer (-j 2) and run it.
# Other variables: SOURCE_DIR, CONSUMER_SRC, CONSUMER_BUILD, GENERATOR, MAKE_PROGRAM, CXX, BUILD_TYPE,
# CXX_FLAGS and LINK_FLAGS (the sanitizer flags of an ASan build, empty otherwise). The install mode
# also checks that the exported minfer-targets*.cmake hold no sanitizer flags.
function(run)
    execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        string(REPLACE ";" " " cmd "${ARGV}")
        message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
    endif()
    message("${out}")
endfunction()

file(REMOVE_RECURSE ${CONSUMER_BUILD})
set(configure ${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${CONSUMER_BUILD} -G ${GENERATOR}
    -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
if(MODE STREQUAL "subdirectory")
    run(${configure} -DMINFER_SOURCE_DIR=${SOURCE_DIR} -DMINFER_BUILD_CLI=OFF -DMINFER_BUILD_TESTS=OFF)
elseif(MODE STREQUAL "install")
    file(REMOVE_RECURSE ${PREFIX})
    run(${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGETS})  # a no-op when the build is current
    run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
    foreach(f include/minfer/gguf.hpp include/minfer/gguf/file_view.hpp include/minfer/gguf_write/writer.hpp)
        if(NOT EXISTS ${PREFIX}/${f})
            message(FATAL_ERROR "${f} was not installed")
        endif()
    endforeach()
    file(GLOB_RECURSE internal ${PREFIX}/*byte_cursor.hpp)
    if(internal)
        message(FATAL_ERROR "an internal header was installed: ${internal}")
    endif()
    # The exported targets carry usage requirements only: no sanitizer (or other build-only) flags
    # may reach a consumer through them.
    file(GLOB_RECURSE exported ${PREFIX}/*/minfer-targets*.cmake)
    if(NOT exported)
        message(FATAL_ERROR "minfer-targets.cmake was not installed")
    endif()
    foreach(f IN LISTS exported)
        file(READ ${f} text)
        if(text MATCHES "-fsanitize|-fno-sanitize|-fno-omit-frame-pointer")
            message(FATAL_ERROR "${f} exports sanitizer flags to consumers:\n${text}")
        endif()
    endforeach()
    file(GLOB_RECURSE config ${PREFIX}/*/minfer-config.cmake)
    if(NOT config)
        message(FATAL_ERROR "minfer-config.cmake was not installed")
    endif()
    run(${configure} -DCMAKE_PREFIX_PATH=${PREFIX})
else()
    message(FATAL_ERROR "MODE must be subdirectory or install")
endif()
run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD} -j 2)
run(${CONSUMER_BUILD}/consumer ${CONSUMER_BUILD}/consumer.gguf)
