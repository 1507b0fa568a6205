"""The one packaging setting pyproject.toml cannot state: conf/, experiments/ and the papers' results
READMEs stay at the top of the repository and ship inside the package, as rbmlab/conf,
rbmlab/experiments and rbmlab/results (found at run time by rbmlab.resources). Everything else is in
pyproject.toml."""

from setuptools import find_packages, setup

FILES = {  # package -> (repository folder, the files it ships)
    "rbmlab.conf": ("conf", ["**/*.yaml"]),
    "rbmlab.experiments": ("experiments", ["**/*.yaml", "composites.mk"]),  # the make targets' parts
    "rbmlab.results": ("results", ["*/README.md"]),  # what each artefact cost (rbmlab experiment list)
}

setup(
    packages=[*find_packages(include=["rbmlab", "rbmlab.*"]), "hydra_plugins.rbmlab_launcher", *FILES],
    package_dir={package: folder for package, (folder, _) in FILES.items()},
    package_data={
        **{package: globs for package, (_, globs) in FILES.items()},
        "rbmlab": ["py.typed"],  # PEP 561: the package's own annotations are its types
    },
    include_package_data=False,
)  # the files above only
