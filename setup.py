"""Package discovery: torchlight's packages, and simulator/ shipped as ``torchlight.simulator``.

pyproject.toml holds everything else; its find directive cannot place a folder outside
``torchlight/`` under the ``torchlight`` name, so the two searches are joined here.
"""

from setuptools import find_packages, setup


def packages() -> list[str]:
    """Every package of the wheel: torchlight's, and the simulator's (its tests left out)."""
    simulator = find_packages(include=["simulator", "simulator.*"], exclude=["simulator.tests*"])
    return [*find_packages(include=["torchlight", "torchlight.*"]), *(f"torchlight.{n}" for n in simulator)]


if __name__ == "__main__":  # setuptools runs this file as a script
    setup(packages=packages())
