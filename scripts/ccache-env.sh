# Sourced by the build scripts: compile through ccache when it is installed (optional: nothing is
# installed for it). CMake reads CMAKE_<LANG>_COMPILER_LAUNCHER from the environment when a build
# directory is first configured, so a clean clone (CI) reuses the objects of earlier runs on this
# machine. CCACHE_BASEDIR makes paths relative to the checkout, so another clone's directory hits
# the same entries; CCACHE_NOHASHDIR keeps the build directory out of the debug-info hash.
if command -v ccache >/dev/null 2>&1 && [ -z "${MINFER_NO_CCACHE:-}" ]; then
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(pwd)}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-30G}  # five presets of debug objects outgrow the 5 GB default
fi
