"""setup.py: only the build step that copies libmaxgemm.so into the package (everything else is pyproject.toml).

`pip install ./python` after `make` (in the repository root) bundles the library the package then finds without
any path: $MAXGEMM_LIB if set at install time, else ../build/libmaxgemm.so next to this file. Without either the
package installs alone and finds the library at run time ($MAXGEMM_LIB, or the repository's build/ for an editable
install). An editable install (`pip install -e ./python`) copies nothing: it loads the repository's build/ directly,
so a rebuild is picked up without reinstalling.
"""

import os
import shutil

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


def library_source():
    return os.environ.get("MAXGEMM_LIB") or os.path.join(HERE, "..", "build", "libmaxgemm.so")


class LibraryDistribution(Distribution):
    """With the library bundled the wheel holds a Linux x86-64 binary: tag it for the platform, not py3-none-any."""

    def has_ext_modules(self):
        return os.path.isfile(library_source())


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        src = library_source()
        dst_dir = os.path.join(self.build_lib, "maxgemm_torch")
        if os.path.isfile(src):
            os.makedirs(dst_dir, exist_ok=True)
            shutil.copy2(src, os.path.join(dst_dir, "libmaxgemm.so"))
            print(f"maxgemm_torch: bundled {os.path.normpath(src)}")
        else:
            print(f"maxgemm_torch: {os.path.normpath(src)} not found; installing without the library "
                  f"(set MAXGEMM_LIB at run time, or run `make` and reinstall)")


setup(distclass=LibraryDistribution, cmdclass={"build_py": BuildPyWithLibrary})
