"""The one packaging setting pyproject.toml cannot state: conf/ and experiments/ stay at the top of
the repository and ship inside the package, as rbmlab/conf and rbmlab/experiments (found at run time
by rbmlab.resources). Everything else is in pyproject.toml."""
from setuptools import find_packages, setup

SHIPPED = {"rbmlab.conf": "conf", "rbmlab.experiments": "experiments"}   # package -> repository folder

setup(packages=[*find_packages(include=["rbmlab", "rbmlab.*"]), *SHIPPED],
      package_dir=SHIPPED,
      package_data={package: ["**/*.yaml"] for package in SHIPPED},
      include_package_data=False)   # the yaml files above only (MANIFEST/git files would add nothing)
