"""Builds minfer's extension modules with CMake (python/CMakeLists.txt) for `pip install .`.

The libraries are compiled in Release into the build folder setuptools gives, linked statically
into minfer/_core and minfer/_toolbox; the interpreter that runs pip is the one they are built for.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name: str) -> None:
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext: Extension) -> None:
        if ext.name != "minfer._core":
            return  # one CMake build makes both modules
        package_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = Path(self.build_temp).resolve() / "cmake"
        build_dir.mkdir(parents=True, exist_ok=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
            "-DMINFER_BUILD_CLI=OFF", "-DMINFER_BUILD_TESTS=OFF", "-DMINFER_INSTALL=OFF",
            "-DMINFER_BUILD_CHECK=ON", "-DMINFER_BUILD_REMOTE=ON", "-DMINFER_BUILD_PYTHON=ON",
            f"-DPython_EXECUTABLE={sys.executable}", f"-DMINFER_PYTHON_PACKAGE_DIR={package_dir}",
        ]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "minfer_py_core", "minfer_py_toolbox",
                        "--parallel", jobs], check=True)


setup(
    ext_modules=[CMakeExtension("minfer._core"), CMakeExtension("minfer._toolbox")],
    cmdclass={"build_ext": CMakeBuild},
)
