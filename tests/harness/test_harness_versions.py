"""Pinned versions agree: ci/versions.env is the one place, everything else must follow it."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from ci import tiers

ROOT = Path(__file__).resolve().parents[2]
VERSIONS_FILE = ROOT / "ci" / "versions.env"
DOCKERFILES = [ROOT / "Dockerfile.cpu", ROOT / "Dockerfile.cuda", *sorted((ROOT / "ci").glob("*.Dockerfile"))]
# Files that may name a CUDA base image or CUDA wheel; each must name the pinned one.
SCANNED = [
    *DOCKERFILES,
    ROOT / "noxfile.py",
    ROOT / "README.md",
    ROOT / ".ci" / "run",
    ROOT / ".github" / "workflows" / "ci.yml",
    *sorted((ROOT / "ci").glob("*.sh")),
    *sorted((ROOT / "ci").glob("*.py")),
]


def read_versions(path: Path = VERSIONS_FILE) -> dict[str, str]:
    """KEY=VALUE pairs of ci/versions.env, double quotes stripped."""
    values = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        assert sep and key.isidentifier(), f"ci/versions.env: not KEY=VALUE: {line!r}"
        values[key] = value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value
    return values


VERSIONS = read_versions()


def test_versions_file_has_the_pins_the_harness_reads():
    for key in ("CUDA_RELEASE", "CUDA_DEVEL_IMAGE", "CUDA_RUNTIME_IMAGE", "CUDA_WHEELS", "PYTHON_IMAGE"):
        assert VERSIONS.get(key), f"ci/versions.env has no {key}"
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSIONS["CUDA_RELEASE"]), VERSIONS["CUDA_RELEASE"]


def test_cuda_base_images_are_the_pinned_release():
    release = VERSIONS["CUDA_RELEASE"]
    for key, flavour in (("CUDA_DEVEL_IMAGE", "devel"), ("CUDA_RUNTIME_IMAGE", "runtime")):
        image = VERSIONS[key]
        assert re.fullmatch(rf"nvidia/cuda:{re.escape(release)}-{flavour}-[\w.]+", image), (
            f"{key}={image} is not the {flavour} image of CUDA {release}"
        )


def test_cuda_wheels_pin_the_release_and_what_numba_cuda_brings():
    spec = VERSIONS["CUDA_WHEELS"]
    match = re.fullmatch(r"cuda-toolkit\[([\w,]+)\]==([\d.]+)", spec)
    assert match, f"CUDA_WHEELS={spec!r}: expected cuda-toolkit[components]==X.Y.Z"
    assert match.group(2) == VERSIONS["CUDA_RELEASE"], f"CUDA_WHEELS pins {match.group(2)}"
    components = set(match.group(1).split(","))
    # nvcc/ptxas for the compile tier; NVRTC, NVVM and the runtime are what numba-cuda[cuXX] brings.
    needed = {"nvcc", "nvrtc", "nvvm", "cudart"}
    assert needed <= components, f"CUDA_WHEELS leaves {sorted(needed - components)} to float"


def test_pyproject_cuda_extra_takes_the_pinned_major_release():
    # tomllib is Python 3.11+; the extra is one line of pyproject.toml.
    line = re.search(r"^cuda = \[.*\]$", (ROOT / "pyproject.toml").read_text(), re.M)
    assert line, "pyproject.toml has no `cuda = [...]` extra"
    majors = set(re.findall(r"numba-cuda\[cu(\d+)\]", line.group(0)))
    assert majors == {VERSIONS["CUDA_RELEASE"].split(".")[0]}, f"the cuda extra takes cu{majors}"


def _extra(name: str) -> set[str]:
    """The requirements of pyproject's extra ``name`` other than torchlight's own extras."""
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    return {r for r in extras[name] if not r.startswith("torchlight[")}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib (reading pyproject.toml) is Python 3.11+")
def test_simulator_extras_pin_the_header_wheels_of_the_release():
    headers = set(VERSIONS["CUDA_HEADER_WHEELS"].split())
    libraries = set(VERSIONS["CUDA_LIBRARY_WHEELS"].split())
    assert headers and all(re.fullmatch(r"nvidia-[\w-]+==[\d.]+", w) for w in headers | libraries)
    pinned = {w for w in _extra("simulator") if w.startswith("nvidia-")}
    assert pinned == headers, f"the simulator extra pins {sorted(pinned)}, ci/versions.env {sorted(headers)}"
    assert _extra("simulator-libs") == libraries


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_arg_defaults_equal_the_pins(dockerfile):
    defaults = dict(re.findall(r'^ARG (\w+)="?([^"\n]*)"?$', dockerfile.read_text(), re.M))
    shared = sorted(set(defaults) & set(VERSIONS))
    for key in shared:
        assert defaults[key] == VERSIONS[key], (
            f"{dockerfile.name}: ARG {key} defaults to {defaults[key]!r}; "
            f"ci/versions.env pins {VERSIONS[key]!r}"
        )
    if dockerfile.name == "Dockerfile.cuda":
        assert {"CUDA_DEVEL_IMAGE", "CUDA_RUNTIME_IMAGE", "CUDA_RELEASE", "CUDA_WHEELS"} <= set(shared)
    if dockerfile.name == "Dockerfile.cpu":
        assert {"PYTHON_IMAGE", "CUDA_RELEASE", "HARNESS_TOOLS"} <= set(shared)


@pytest.mark.parametrize("path", SCANNED, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_names_another_cuda_image_or_wheel(path):
    text = path.read_text()
    for image in re.findall(r"nvidia/cuda:[\w.-]+", text):
        assert image in (VERSIONS["CUDA_DEVEL_IMAGE"], VERSIONS["CUDA_RUNTIME_IMAGE"]), (
            f"{path.name} names {image}; ci/versions.env pins {VERSIONS['CUDA_DEVEL_IMAGE']}"
        )
    pinned = (f"=={VERSIONS['CUDA_RELEASE']}", "==${CUDA_RELEASE}")
    for spec in re.findall(r"cuda-toolkit(?:\[[\w,]*\])?[^\s\"'`\[]*", text):
        assert spec.endswith(pinned), (
            f"{path.name} names {spec!r}, not pinned to CUDA_RELEASE (ci/versions.env)"
        )
    for spec in re.findall(r"nvidia-cuda-(?:nvcc|nvrtc|runtime)[^\s\"'`]*|nvidia-nvvm[^\s\"'`]*", text):
        pytest.fail(f"{path.name} names the component wheel {spec!r}: use CUDA_WHEELS from ci/versions.env")


def test_the_tier_table_takes_its_cuda_wheel_and_tools_from_the_versions_file():
    assert tiers.read_versions() == VERSIONS
    assert tiers.CUDA_WHEELS == VERSIONS["CUDA_WHEELS"]
    assert tiers.HARNESS_TEST_TOOLS == tuple(VERSIONS["HARNESS_TOOLS"].split())
    for name in ("cudasim", "kernels", "gpu"):
        assert VERSIONS["CUDA_WHEELS"] in tiers.TIERS[name].packages, f"the {name} tier lacks CUDA_WHEELS"
    assert set(tiers.HARNESS_TEST_TOOLS) <= set(tiers.TIERS["cpu"].packages)
