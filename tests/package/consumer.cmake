# cmake -P driver of the package tests. MODE=subdirectory: configure the consumer with
# MINFER_SOURCE_DIR (add_subdirectory of the checkout, library only). MODE=install: install the build
# BUILD_DIR into PREFIX (building TARGETS first, as `cmake --install` needs them; none when TARGETS is
# empty), check what was installed, and configure the consumer with find_package(minfer) through
# CMAKE_PREFIX_PATH. Then, in both modes, build the consumer (-j 2) and run it.
# The C API's consumer (c_consumer/, a C99 program): MODE=c_find_package installs as MODE=install
# and builds it with find_package(minfer) and minfer::c; MODE=c_pkgconfig installs, moves the
# installed tree elsewhere (the pkg-config file must be relocatable) and compiles it with CC and the
# flags `pkg-config --cflags --libs minfer` gives.
# Other variables: SOURCE_DIR, CONSUMER_SRC, CONSUMER_BUILD, GENERATOR, MAKE_PROGRAM, CXX, CC,
# BUILD_TYPE, CXX_FLAGS and LINK_FLAGS (the sanitizer flags of an ASan build, empty otherwise). The
# install modes also check that the exported minfer-targets*.cmake hold no sanitizer flags and that
# every installed header directory belongs to an installed library.
function(run)
    execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
        string(REPLACE ";" " " cmd "${ARGV}")
        message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
    endif()
    message("${out}")
endfunction()

function(install_and_check)
    file(REMOVE_RECURSE ${PREFIX})
    if(TARGETS)
        run(${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGETS})  # a no-op when the build is current
    endif()
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
    # A header is installed only with its library: each include/minfer/<dir> names a libminfer_<dir>.a
    # installed beside it, and minfer.h the C API's libminfer.so.
    file(GLOB header_dirs LIST_DIRECTORIES true ${PREFIX}/include/minfer/*)
    foreach(d IN LISTS header_dirs)
        if(IS_DIRECTORY ${d})
            get_filename_component(name ${d} NAME)
            file(GLOB_RECURSE lib ${PREFIX}/*/libminfer_${name}.a)
            if(NOT lib)
                message(FATAL_ERROR "include/minfer/${name} was installed without libminfer_${name}.a")
            endif()
        endif()
    endforeach()
    file(GLOB_RECURSE c_lib ${PREFIX}/*/libminfer.so)
    if(EXISTS ${PREFIX}/include/minfer.h AND NOT c_lib)
        message(FATAL_ERROR "minfer.h was installed without libminfer.so")
    endif()
endfunction()

# The C API as a shared library is installed: minfer.h, libminfer.so.<SOVERSION> (the SONAME a
# program records) and the development link libminfer.so pointing at it.
function(require_c_library)
    file(GLOB_RECURSE so ${PREFIX}/*/libminfer.so)
    file(GLOB_RECURSE so_major ${PREFIX}/*/libminfer.so.0)
    if(NOT so OR NOT so_major OR NOT EXISTS ${PREFIX}/include/minfer.h OR NOT EXISTS ${PREFIX}/include/minfer/ggml_compat.h)
        message(FATAL_ERROR "the C API was not installed whole: libminfer.so '${so}', libminfer.so.0 '${so_major}', minfer.h, minfer/ggml_compat.h")
    endif()
    if(NOT IS_SYMLINK ${so})
        message(FATAL_ERROR "libminfer.so is not the development link to libminfer.so.0")
    endif()
endfunction()

file(REMOVE_RECURSE ${CONSUMER_BUILD})
set(configure ${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${CONSUMER_BUILD} -G ${GENERATOR}
    -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}" "-DCMAKE_EXE_LINKER_FLAGS=${LINK_FLAGS}")
if(MODE STREQUAL "subdirectory")
    run(${configure} -DMINFER_SOURCE_DIR=${SOURCE_DIR} -DMINFER_BUILD_CLI=OFF -DMINFER_BUILD_TESTS=OFF)
elseif(MODE STREQUAL "install")
    install_and_check()
    run(${configure} -DCMAKE_PREFIX_PATH=${PREFIX})
elseif(MODE STREQUAL "c_find_package")
    install_and_check()
    require_c_library()
    run(${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${CONSUMER_BUILD} -G ${GENERATOR}
        -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM} -DCMAKE_C_COMPILER=${CC} -DCMAKE_BUILD_TYPE=${BUILD_TYPE}
        -DCMAKE_PREFIX_PATH=${PREFIX})
    run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
    run(${CONSUMER_BUILD}/c_consumer ${CONSUMER_BUILD}/c_consumer.gguf)
    return()
elseif(MODE STREQUAL "c_pkgconfig")
    install_and_check()
    require_c_library()
    file(GLOB_RECURSE pc ${PREFIX}/*/pkgconfig/minfer.pc)
    if(NOT pc)
        message(FATAL_ERROR "minfer.pc was not installed")
    endif()
    # Installed trees get moved (packaging, unpacked archives): the .pc file must not name PREFIX.
    file(REMOVE_RECURSE ${PREFIX}-moved)
    file(RENAME ${PREFIX} ${PREFIX}-moved)
    string(REPLACE "${PREFIX}/" "${PREFIX}-moved/" pc "${pc}")
    get_filename_component(pc_dir ${pc} DIRECTORY)
    find_program(PKG_CONFIG NAMES pkg-config pkgconf REQUIRED)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir}
        ${PKG_CONFIG} --cflags --libs minfer
        RESULT_VARIABLE rc OUTPUT_VARIABLE flags ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir}
        ${PKG_CONFIG} --variable=libdir minfer
        OUTPUT_VARIABLE libdir OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT rc EQUAL 0 OR NOT IS_DIRECTORY "${libdir}")
        message(FATAL_ERROR "pkg-config minfer failed (${rc}) or named a libdir that does not exist (${libdir}): ${err}")
    endif()
    message("pkg-config --cflags --libs minfer: ${flags}")
    separate_arguments(flags UNIX_COMMAND "${flags}")
    file(MAKE_DIRECTORY ${CONSUMER_BUILD})
    run(${CC} -std=c99 -pedantic -Wall -Wextra -Werror ${CONSUMER_SRC}/main.c ${flags}
        -Wl,-rpath,${libdir} -o ${CONSUMER_BUILD}/c_consumer)
    run(${CONSUMER_BUILD}/c_consumer ${CONSUMER_BUILD}/c_consumer.gguf)
    return()
else()
    message(FATAL_ERROR "MODE must be subdirectory, install, c_find_package or c_pkgconfig")
endif()
run(${CMAKE_COMMAND} --build ${CONSUMER_BUILD} -j 2)
run(${CONSUMER_BUILD}/consumer ${CONSUMER_BUILD}/consumer.gguf)
