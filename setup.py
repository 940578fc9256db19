"""Only what pyproject.toml cannot say: the wheel carries migrations/ and openapi.yaml, which live
at the top of the checkout, in service/_bundled/ (found by service/resources.py)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):  # an editable install reads the checkout
            return
        target = Path(self.build_lib) / "service" / "_bundled"
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(
            "migrations", target / "migrations", ignore=shutil.ignore_patterns("__pycache__")
        )
        shutil.copy2("openapi.yaml", target / "openapi.yaml")


setup(cmdclass={"build_py": BuildPyWithData})
