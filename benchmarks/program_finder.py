"""Find whole CUDA programs in a checkout, as their own build files define them, and say what each
needs that a sample may leave out.

Two kinds: a Make folder (HeCBench's ``src/NAME-cuda``: the sources, flags and ``run`` command
that ``make --dry-run`` prints) and a CMake executable (``add_executable`` in a
``CMakeLists.txt``: NVIDIA's cuda-samples, a textbook's examples). ``needs`` names, in words, the
first thing a program needs from outside the scope a sample is drawn for: a header that
``out_of_scope`` matches, a library outside ``libraries``, or a data file its arguments name that
the checkout lacks. The headers are those the C preprocessor includes with the program's own
flags (``-M -MG``: a header not installed here still counts), so one that only a Windows or MPI
build includes does not.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from build_files import cmake_targets, make_facts

QUOTED_INCLUDE = re.compile(r'#\s*include\s*"([^"]+)"')
LINK_LIBRARIES = re.compile(r"target_link_libraries\s*\(\s*([^\s)]+)([^)]*)\)", re.I)
INCLUDE_DIRECTORIES = re.compile(r"(?<![_\w])include_directories\s*\(([^)]*)\)", re.I)
TARGET_INCLUDE_DIRECTORIES = re.compile(r"target_include_directories\s*\(\s*([^\s)]+)([^)]*)\)", re.I)
CMAKE_WORDS = {"PRIVATE", "PUBLIC", "INTERFACE", "SYSTEM", "BEFORE", "AFTER"}
FILE_LIKE = re.compile(r"/|\.[A-Za-z][A-Za-z0-9]{0,5}$")


@dataclass
class Candidate:
    """One program: paths relative to the root that holds the checkouts."""

    name: str
    sources: list[str]
    cwd: str
    include: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    args: list[str] = field(default_factory=list)
    libraries: list[str] = field(default_factory=list)
    build: dict = field(default_factory=dict)


def _rel(path: Path, root: Path) -> str:
    return path.resolve().relative_to(root.resolve()).as_posix()


def make_programs(
    root: Path, pattern: str, variables: dict[str, str]
) -> tuple[list[Candidate], dict[str, str]]:
    """Every folder matching ``pattern`` under ``root`` whose Makefile builds sources and has a
    ``run`` target; and the folders passed over, each with make's reason."""
    found, refused = [], {}
    for folder in sorted(root.glob(pattern)):
        if not (folder / "Makefile").is_file():
            continue
        name = _rel(folder, root)
        try:
            facts = make_facts(folder, variables)
        except ValueError as exc:
            refused[name] = "Makefile: " + str(exc).split(": ", 1)[-1]
            continue
        runs = [argv for argv in facts.runs if argv and argv[0].startswith("./")]
        if not facts.sources or not runs:
            refused[name] = "Makefile: it builds no source, or its run target runs no ./program"
            continue
        found.append(
            Candidate(
                name=name,
                sources=[_rel(folder / s, root) for s in facts.sources],
                cwd=name,
                include=[_rel(folder / i, root) for i in facts.includes if (folder / i).is_dir()],
                defines=facts.defines,
                args=runs[0][1:],
                libraries=facts.libraries,
                build={"system": "make", "dir": name, "program": runs[0][0][2:], "vars": dict(variables)},
            )
        )
    return found, refused


def listed_make_programs(
    root: Path, programs: dict[str, tuple[str, str, list[str]]], variables: dict[str, str]
) -> list[Candidate]:
    """The programs of a fixed table, NAME -> (FOLDER under the root, EXECUTABLE, ARGS), each built
    by the Makefile in its folder with ``variables``; no sources are listed (such a suite builds
    through sub-makes and several programs a folder, which a dry run does not tell apart)."""
    found = []
    for name, (folder, program, args) in programs.items():
        if not (root / folder).is_dir():
            raise SystemExit(f"{root / folder} is missing: is --root the folder that holds the checkouts?")
        build = {"system": "make", "dir": folder, "program": program, "vars": dict(variables)}
        found.append(Candidate(name=name, sources=[], cwd=folder, args=list(args), build=build))
    return found


def _folders(words: str, base: Path, root: Path) -> list[str]:
    """The existing folders among CMake words, relative to ``base`` (variables are left out)."""
    found = []
    for word in words.split():
        word = word.replace("${CMAKE_CURRENT_SOURCE_DIR}", str(base))
        if word not in CMAKE_WORDS and "$" not in word and (base / word).is_dir():
            found.append(_rel(base / word, root))
    return found


def cmake_programs(root: Path, under: str, include: Iterable[str] = ()) -> list[Candidate]:
    """Every executable that a ``CMakeLists.txt`` below ``root/under`` adds from files alone, named
    ``FOLDER/EXECUTABLE``. Its include folders are ``include`` (folders under the root), those of
    ``include_directories`` in its ``CMakeLists.txt`` and the ones above it (below ``under``), and
    its ``target_include_directories``; a library of the project that it links (``add_library``
    from files) adds its sources."""
    top = (root / under).resolve()
    files = sorted(top.rglob("CMakeLists.txt"))
    texts = {f: re.sub(r"#[^\n]*", "", f.read_text(errors="replace")) for f in files}
    project_libraries = {
        name: [_rel(f.parent / s, root) for s in sources]
        for f in files
        for name, sources in cmake_targets(f, "library").items()
    }
    found = []
    for cmakelists in files:
        rel = _rel(cmakelists.parent, root)
        text = texts[cmakelists]
        folders = list(include)
        for above in [
            cmakelists,
            *(p / "CMakeLists.txt" for p in cmakelists.parent.parents if p.is_relative_to(top)),
        ]:
            for words in INCLUDE_DIRECTORIES.findall(texts.get(above, "")):
                folders += _folders(words, above.parent, root)
        links: dict[str, list[str]] = {}
        for target, words in LINK_LIBRARIES.findall(text):
            links.setdefault(target, []).extend(
                w.removeprefix("CUDA::") for w in words.split() if w not in CMAKE_WORDS
            )
        own: dict[str, list[str]] = {}
        for target, words in TARGET_INCLUDE_DIRECTORIES.findall(text):
            own.setdefault(target, []).extend(_folders(words, cmakelists.parent, root))
        for exe, sources in cmake_targets(cmakelists).items():
            linked = links.get(exe, [])
            found.append(
                Candidate(
                    name=f"{rel}/{exe}",
                    sources=[f"{rel}/{s}" for s in sources]
                    + [s for lib in linked for s in project_libraries.get(lib, [])],
                    cwd=rel,
                    include=list(dict.fromkeys([*folders, *own.get(exe, [])])),
                    libraries=[lib for lib in linked if lib not in project_libraries],
                    build={"system": "cmake", "dir": rel, "program": exe},
                )
            )
    return found


def program_text(root: Path, candidate: Candidate) -> str:
    """The program's sources and every header they include by a quoted name that resolves next to
    the including file or in the program's include folders, recursively."""
    seen: set[Path] = set()
    queue = [root / s for s in candidate.sources]
    texts = []
    while queue:
        path = queue.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        text = path.read_text(errors="replace")
        texts.append(text)
        for name in QUOTED_INCLUDE.findall(text):
            for base in [path.parent, *(root / i for i in candidate.include)]:
                if (base / name).is_file():
                    queue.append((base / name).resolve())
                    break
    return "\n".join(texts)


def unfetched_data(root: Path, candidate: Candidate) -> str | None:
    """The first data file of the program's folder kept out of git with DVC (``NAME.dvc`` beside
    where it goes) that nobody fetched, if any."""
    folder = root / candidate.cwd
    for pointer in sorted(folder.glob("*.dvc")) if folder.is_dir() else []:
        if not pointer.with_suffix("").exists():
            return pointer.with_suffix("").name
    return None


def missing_data(root: Path, candidate: Candidate) -> str | None:
    """The first argument that names a file or folder the checkout lacks, if any."""
    for arg in candidate.args:
        try:
            float(arg)
            continue
        except ValueError:
            pass
        if arg.startswith("-") or not FILE_LIKE.search(arg):
            continue
        if not (root / candidate.cwd / arg).exists():
            return arg
    return None


def headers(root: Path, candidate: Candidate) -> list[str]:
    """Every header the program's sources include as the preprocessor sees them (nvcc's macros,
    the program's ``-D`` and ``-I`` flags), those not found here by the name they are included as."""
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or "c++"
    flags = ["-std=c++17", "-D__CUDACC__", "-D__NVCC__", *(f"-D{d}" for d in candidate.defines)]
    flags += [f"-I{root / i}" for i in candidate.include]
    found: list[str] = []
    for source in candidate.sources:
        path = root / source
        language = "c" if path.suffix == ".c" else "c++"
        cmd = [compiler, "-x", language, *(flags if language == "c++" else flags[1:]), "-M", "-MG", str(path)]
        done = subprocess.run(
            cmd, capture_output=True, text=True, errors="replace", cwd=path.parent, timeout=120
        )
        words = done.stdout.replace("\\\n", " ").split()
        found += [w for w in words[1:] if w != "\\" and w not in found]
    return found


def needs(root: Path, candidate: Candidate, out_of_scope: re.Pattern, libraries: set[str]) -> str | None:
    """Why ``candidate`` is outside the sample's scope, in words, or None when it is inside."""
    for header in headers(root, candidate):
        if out_of_scope.search(header):
            shown = Path(header).relative_to(root) if header.startswith(str(root) + "/") else header
            return f"includes {shown}"
    for library in candidate.libraries:
        if library not in libraries:
            return f"links {library}"
    gone = missing_data(root, candidate)
    if gone:
        return f"reads {gone}, which the checkout lacks"
    return None
