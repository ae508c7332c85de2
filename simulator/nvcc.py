"""``python -m simulator nvcc ARGS``: nvcc's command line, building code that runs on the CPU.

A ``.cu`` compiled with ``-c`` (or ``-dc``) becomes a real object: its host code and its kernels,
translated by the simulator's front end and registered with the runtime by static initialisers
when the program loads. Objects link with host objects, archives and shared libraries into
executables (``-o``) or shared libraries (``-shared``), with the toolkit's runtime archive
(``toolkit.py``); ``-lib`` makes a static archive, ``-dlink`` an (empty) device-link object, as
separate compilation needs no device link here. ``SIMULATOR_MODE`` (memcheck, racecheck,
synccheck) selects the checker's build for every step. Errors are one nvcc-style line and exit 1.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from . import build, cuda_headers, link_stubs, modules, toolkit
from .compiler_run import run_tool
from .errors import SimBuildError
from .nvcc_options import OPTIONS, NvccCommand, NvccUsageError, parse
from .toolchain import crt_build

__all__ = ["main"]

SOURCE_KINDS = {
    ".cu": "cu",
    ".cpp": "c++",
    ".cc": "c++",
    ".cxx": "c++",
    ".c++": "c++",
    ".C": "c++",
    ".c": "c",
}
LINKABLE = (".o", ".a", ".so", ".obj")
_LANGUAGES = {"cu": "cu", "c++": "c++", "c": "c", "cpp": "c++"}


def _version_text() -> str:
    version = cuda_headers.toolkit_version(build.toolkit_include())
    major, minor = version // 1000, version % 1000 // 10
    crt = crt_build()
    return (
        "nvcc: NVIDIA (R) Cuda compiler driver\n"
        "Copyright (c) 2005-2025 NVIDIA Corporation\n"
        "Built on the torchlight CUDA simulator: device code runs on the CPU\n"
        f"Cuda compilation tools, release {major}.{minor}, V{major}.{minor}.{crt}\n"
        f"Build cuda_{major}.{minor}.r{major}.{minor}/simulator\n"
    )


def _kind(path: str, language: str | None) -> str:
    """What an input is: ``cu``, ``c++``, ``c`` (sources) or ``link`` (objects and libraries)."""
    suffix = Path(path).suffix
    if language is not None and suffix not in LINKABLE:
        return language
    if suffix in SOURCE_KINDS:
        return SOURCE_KINDS[suffix]
    if suffix in LINKABLE or ".so." in Path(path).name:
        return "link"
    raise NvccUsageError(f"Don't know what to do with '{path}'")


def _arch(cmd: NvccCommand) -> tuple[int, list[str]]:
    """``__CUDA_ARCH__`` for device code, and every GPU target named (recorded, not compiled for)."""
    named = cmd.get("gpu_architecture") + cmd.get("gpu_code") + cmd.get("generate_code")
    found: list[int] = []
    for text in named:
        for part in text.replace("=", ",").split(","):
            digits = part.strip().rsplit("_", 1)[-1].rstrip("af")
            if digits.isdigit() and int(digits) >= 10:
                found.append(int(digits) * 10)
    # The modelled device is sm_80: device code takes the highest target up to it (else the lowest).
    fitting = [a for a in found if a <= build.DEFAULT_ARCH]
    arch = max(fitting) if fitting else (min(found) if found else build.DEFAULT_ARCH)
    return arch, named


def _host_flags(cmd: NvccCommand, kind: str) -> list[str]:
    """The host compiler's flags for one source of ``kind``: macros, include folders, -Xcompiler."""
    flags = [f"-D{d}" for d in cmd.get("defines")] + [f"-U{u}" for u in cmd.get("undefines")]
    # The toolkit's own include folder (Makefiles name it: -I$(CUDA_DIR)/include) is left out: the
    # build already searches its headers as system headers, as g++ ignores a -I of a system folder;
    # searched through -I, they would be parsed as the program's own code.
    own = toolkit.include_dir().resolve()
    for d in cmd.get("include_dirs"):
        if Path(d).resolve() != own:
            flags += ["-I", str(Path(d).resolve())]
    for d in cmd.get("system_include_dirs"):
        if Path(d).resolve() != own:
            flags += ["-isystem", str(Path(d).resolve())]
    for f in cmd.get("pre_includes"):
        flags += ["-include", f]
    std = cmd.last("std")
    if std and kind != "c" and std.lstrip("cgnu+") not in ("03", "11", "14", "17"):
        flags.append(f"-std={std}")  # the simulator's headers need C++17: older standards compile as 17
    if cmd.has("no_warnings"):
        flags.append("-w")
    return flags + cmd.get("compiler_options")


def _compile(cmd: NvccCommand, source: str, kind: str, mode: str) -> Path:
    """The cached object of one source."""
    arch, _ = _arch(cmd)
    fmad = (cmd.last("fmad", "true") or "true").lower() not in ("false", "0")
    return build.kernel_object(
        source, mode, arch=arch, fmad=fmad, language=kind, extra_flags=_host_flags(cmd, kind)
    )


def _preprocessor(cmd: NvccCommand, source: str, kind: str) -> list[str]:
    """The ``g++ -E`` command nvcc's host pass would run on ``source`` (without ``-E``)."""
    arch, _ = _arch(cmd)
    cxx = build.compiler()
    # The source is read in place, so its own folder is searched for quoted includes as with nvcc,
    # and the dependencies name them as nvcc does (relative to how the source was named).
    flags = [*build.toolkit_flags(), *_host_flags(cmd, kind)]
    if kind == "cu":
        runtime = str(build.RUNTIME_DIR / "cuda_sim.h")
        return [cxx, "-std=gnu++17", *flags, *build.nvcc_macros(arch), "-include", runtime, "-x", "c++"]
    return [cxx, *(["-x", "c"] if kind == "c" else ["-std=gnu++17", "-x", "c++"]), *flags]


def _preprocessed(cmd: NvccCommand, source: str, kind: str) -> str:
    """``source`` as nvcc's host pass preprocesses it (``-E``)."""
    args = [*_preprocessor(cmd, source, kind), "-E", source]
    _say(cmd, args)
    if cmd.has("dryrun"):
        return ""
    proc = run_tool(args)
    if proc.returncode != 0:
        raise SimBuildError(f"preprocessing {source} failed:\n{proc.stderr.strip()}")
    return proc.stdout


def _object_name(cmd: NvccCommand, source: str) -> Path:
    name = Path(source).with_suffix(".o").name
    return Path(cmd.last("output_dir", ".") or ".") / name


def _dependencies(cmd: NvccCommand, source: str, kind: str, system: bool, target: str | None) -> str:
    """nvcc's make rule for ``source``: ``target : source \\`` and one dependency a line."""
    args = [*_preprocessor(cmd, source, kind), "-M" if system else "-MM", "-MT", "TARGET", source]
    proc = run_tool(args, env=dict(os.environ, LC_ALL="C"))
    if proc.returncode != 0:
        raise SimBuildError(f"could not list the dependencies of {source}:\n{proc.stderr.strip()}")
    body = proc.stdout.replace("\\\n", " ").split(":", 1)[1]
    deps = body.split()
    named = cmd.get("deps_targets")
    if len(set(named)) > 1:
        print(
            "nvcc warning : incompatible redefinition for option 'dependency-target-name', "
            "the last value of this option was used",
            file=sys.stderr,
        )
    rule_target = named[-1] if named else target or str(_object_name(cmd, source))
    lines = [f"{rule_target} : {deps[0]} \\"] + [f"    {d} \\" for d in deps[1:]]
    lines[-1] = lines[-1][:-2]
    text = "\n".join(lines) + "\n"
    if cmd.has("deps_phony"):  # -MP: an empty rule per header, as "\nHEADER:\n" (no space, unlike the rule)
        text += "".join(f"\n{d}:\n" for d in deps[1:])
    return text


def _check_outputs(cmd: NvccCommand, outputs: list[Path]) -> None:
    inputs = {Path(i).resolve() for i in cmd.inputs}
    for out in outputs:
        if out.resolve() in inputs:
            raise NvccUsageError(f"Output file '{out}' is also an input file: give another name with -o")


def _verbose_header(mode: str) -> None:
    top = toolkit.mode_root(mode)
    libs = toolkit.library_dir(mode)
    for line in (
        "_NVVM_BRANCH_=nvvm",
        "_SPACE_= ",
        "_CUDART_=cudart",
        f"_HERE_={top}/bin",
        f"_THERE_={top}/bin",
        "_TARGET_SIZE_=",
        "_TARGET_DIR_=",
        f"TOP={top}",
        f"NVVMIR_LIBRARY_DIR={top}/nvvm/libdevice",
        f"PATH={top}/bin:{os.environ.get('PATH', '')}",
        f'INCLUDES="-I{top}/include"',
        f'LIBRARIES=  "-L{libs}"',
    ):
        print(f"#$ {line}", file=sys.stderr)


def _say(cmd: NvccCommand, args: list[str]) -> None:
    if cmd.has("verbose") or cmd.has("dryrun"):
        print("#$ " + " ".join(shlex.quote(a) if '"' not in a else a for a in args), file=sys.stderr)


def _run(cmd: NvccCommand, args: list[str], what: str) -> None:
    _say(cmd, args)
    if cmd.has("dryrun"):
        return
    proc = run_tool(args)
    if proc.returncode != 0:
        raise SimBuildError(f"{what} failed:\n{(proc.stderr or proc.stdout).strip()}")


def _place(cmd: NvccCommand, built: Path, dest: Path) -> None:
    _say(cmd, ["cp", str(built), str(dest)])
    if cmd.has("dryrun"):
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.nvcc{os.getpid()}")
    shutil.copyfile(built, tmp)
    os.replace(tmp, dest)


def _link(cmd: NvccCommand, parts: list[str], mode: str, output: Path, shared: bool) -> None:
    libs = toolkit.library_dir(mode)
    cudart = {"static": ["-lcudart_static"], "shared": ["-lcudart"], "none": []}.get(
        (cmd.last("cudart", "static") or "static").lower()
    )
    if cudart is None:
        raise NvccUsageError(f"Value '{cmd.last('cudart')}' is not defined for option 'cudart'")
    linker = [f"-Wl,{o}" for o in cmd.get("linker_options")]
    args = [
        build.compiler(),
        "-pthread",
        *(["-shared"] if shared else []),
        *build.link_flags(mode),
        *_module_host(parts, mode, shared),
        *cmd.get("compiler_options"),
        *parts,
        *[f"-L{d}" for d in cmd.get("library_dirs")],
        *[f"-l{lib}" for lib in cmd.get("libraries")],
        *linker,
        f'"-L{libs}"',
        *cudart,
        "-lm",
        "-ldl",
        "-lrt",
        "-o",
        str(output),
    ]
    _say(cmd, args)
    if cmd.has("dryrun"):
        return
    real = [a.strip('"') for a in args]
    proc = run_tool(real)
    if proc.returncode != 0:
        raise SimBuildError(f"link of {output} failed:\n{(proc.stderr or proc.stdout).strip()}")


def _module_host(parts: list[str], mode: str, shared: bool) -> list[str]:
    """An executable whose objects load driver API modules links the runtime exported
    (``modules.py``): ``-rdynamic`` and that runtime's object, ahead of the toolkit's archive."""
    if shared:
        return []
    undefined: set[str] = set()
    for part in parts:
        if part.endswith(".o") and Path(part).is_file():
            undefined |= link_stubs.symbols(Path(part))[1]
    runtime, export = modules.runtime_link(build.runtime_object(mode), undefined)
    return [*export, str(runtime)] if export else []


def _drive(cmd: NvccCommand) -> int:
    if cmd.has("version"):
        sys.stdout.write(_version_text())
        if not cmd.inputs:
            return 0
    if cmd.has("help"):
        names = sorted(" ".join(o.names) for o in OPTIONS)
        print(
            "Usage  : nvcc [options] <inputfile>\nOptions the simulator's nvcc takes:\n  "
            + "\n  ".join(names)
        )
        return 0
    host = cmd.last("host_compiler")
    if host:
        os.environ["CXX"] = _host_compiler(host)
    mode = toolkit.build_mode()
    if cmd.has("verbose") or cmd.has("dryrun"):
        _verbose_header(mode)
    if not cmd.inputs:
        raise NvccUsageError("No input files specified; use option --help for more information")
    language = cmd.last("language")
    if language is not None and language not in _LANGUAGES:
        raise NvccUsageError(f"Value '{language}' is not defined for option 'x'")
    kinds = [_kind(i, _LANGUAGES.get(language or "")) for i in cmd.inputs]
    for path in cmd.inputs:
        if not Path(path).exists():
            raise NvccUsageError(f"Could not open input file '{path}'")
    output = cmd.last("output")
    sources = [(i, k) for i, k in zip(cmd.inputs, kinds) if k != "link"]
    deps = cmd.last("deps")
    if deps is not None or cmd.phase == "preprocess":
        if len(sources) != 1:
            raise NvccUsageError(
                "A single input file is required for a non-link phase when an outputfile is specified"
            )
        source, kind = sources[0]
        if deps is not None:
            text = _dependencies(cmd, source, kind, deps == "M", None)
        else:
            text = _preprocessed(cmd, source, kind)
        target = (cmd.last("deps_file") or output) if deps is not None else output
        if cmd.has("dryrun"):
            return 0
        if target:
            _check_outputs(cmd, [Path(target)])
            Path(target).write_text(text)
        else:
            sys.stdout.write(text)
        return 0
    if cmd.phase == "cuda":
        # nvcc writes each .cu's host code as FILE.cu.cpp.ii; here, its host pass's preprocessed text.
        cu = [s for s, k in sources if k == "cu"]
        if output and len(cu) > 1:
            raise NvccUsageError(
                "A single input file is required for a non-link phase when an outputfile is specified"
            )
        outs = [Path(output) if output else Path(Path(s).name + ".cpp.ii") for s in cu]
        _check_outputs(cmd, outs)
        for source, out in zip(cu, outs):
            text = _preprocessed(cmd, source, "cu")
            if not cmd.has("dryrun"):
                out.write_text(text)
        return 0
    if cmd.phase in ("compile", "relocatable"):
        if output and len(sources) > 1:
            raise NvccUsageError(
                "A single input file is required for a non-link phase when an outputfile is specified"
            )
        outs = [Path(output) if output else _object_name(cmd, s) for s, _ in sources]
        _check_outputs(cmd, outs)
        for (source, kind), out in zip(sources, outs):
            _place(cmd, _compile_or_say(cmd, source, kind, mode), out)
            _write_dependency_file(cmd, source, kind, out)
        return 0
    if cmd.phase in ("fatbin", "cubin", "ptx"):
        _modules(cmd, sources, mode)
        return 0
    if cmd.phase == "device-link":
        out = Path(output or "a_dlink.o")
        _check_outputs(cmd, [out])
        _run(cmd, [build.compiler(), "-c", "-x", "c++", os.devnull, "-o", str(out)], "the device link")
        return 0
    objects = [str(_compile_or_say(cmd, s, k, mode)) if k != "link" else s for s, k in zip(cmd.inputs, kinds)]
    if cmd.phase == "lib":
        out = Path(output or "a.a")
        _check_outputs(cmd, [out])
        if out.exists() and not cmd.has("dryrun"):
            out.unlink()
        _run(cmd, [shutil.which("ar") or "ar", "rcs", *cmd.get("archive_options"), str(out), *objects], "ar")
        return 0
    out = Path(output or "a.out")
    _check_outputs(cmd, [out])
    _link(cmd, objects, mode, out, shared=cmd.phase == "shared")
    return 0


# What -ptx writes: a PTX comment, so that cuModuleLoadData refuses it as the PTX it stands for.
_NO_PTX = (
    "// The CUDA simulator's nvcc generates no PTX (its kernels run on the CPU); a program that\n"
    "// JIT-compiles this file is refused at cuModuleLoadData. Build with -fatbin or -cubin.\n"
)


def _modules(cmd: NvccCommand, sources: list[tuple[str, str]], mode: str) -> None:
    """-fatbin, -cubin: each source's driver API module (``X.fatbin``/``X.cubin`` unless -o); -ptx
    a note in its place."""
    if len(sources) != 1 and cmd.last("output"):
        raise NvccUsageError(
            "A single input file is required for a non-link phase when an outputfile is specified"
        )
    for source, kind in sources:
        if kind == "c":
            raise NvccUsageError(f"{source}: a {cmd.phase} is built from CUDA or C++ sources, not C")
    suffix = {"fatbin": ".fatbin", "cubin": ".cubin", "ptx": ".ptx"}[cmd.phase]
    outs = [Path(cmd.last("output") or Path(s).with_suffix(suffix).name) for s, _ in sources]
    _check_outputs(cmd, outs)
    arch, _ = _arch(cmd)
    fmad = (cmd.last("fmad", "true") or "true").lower() not in ("false", "0")
    for (source, kind), out in zip(sources, outs):
        _say(cmd, [f"<module of {source} for {mode}>", "-o", str(out)])
        if cmd.has("dryrun"):
            continue
        if cmd.phase == "ptx":
            out.write_text(_NO_PTX)
            continue
        modules.build_module(
            source, out, mode, arch=arch, fmad=fmad, language=kind, extra_flags=_host_flags(cmd, kind)
        )


def _compile_or_say(cmd: NvccCommand, source: str, kind: str, mode: str) -> Path:
    if cmd.has("verbose") or cmd.has("dryrun"):
        # "-arch compute_NN" as in nvcc's device-compile line: CMake reads the default
        # architecture from it when a project sets no CMAKE_CUDA_ARCHITECTURES.
        arch, _ = _arch(cmd)
        print(
            f"#$ {sys.executable} -m {toolkit.package_name()} translate --mode {mode}"
            f" -arch compute_{arch // 10} {source}",
            file=sys.stderr,
        )
    return _compile(cmd, source, kind, mode)


def _write_dependency_file(cmd: NvccCommand, source: str, kind: str, out: Path) -> None:
    with_compile = cmd.last("deps_with_compile")
    if with_compile is None or cmd.has("dryrun"):
        return
    target = Path(cmd.last("deps_file") or out.with_suffix(".d"))
    target.write_text(_dependencies(cmd, source, kind, with_compile == "MD", str(out)))


def _host_compiler(given: str) -> str:
    """The C++ compiler ``-ccbin`` names (a folder, a C compiler or a C++ one)."""
    path = Path(given)
    if path.is_dir():
        for name in ("g++", "c++", "clang++"):
            if (path / name).is_file():
                return str(path / name)
        raise NvccUsageError(f"No C++ compiler found in the folder '{given}' given to -ccbin")
    name = path.name
    for c, cxx in (("gcc", "g++"), ("clang", "clang++"), ("cc", "c++")):
        if name == c or name.startswith(c + "-"):
            candidate = path.with_name(cxx + name[len(c) :])
            return str(candidate) if path.parent != Path(".") else candidate.name
    return given


def main(argv: list[str] | None = None) -> int:
    """Run nvcc's command line ``argv``; returns the exit status (1 for any error, as nvcc)."""
    try:
        return _drive(parse(list(sys.argv[1:] if argv is None else argv)))
    except NvccUsageError as exc:
        print(f"nvcc fatal   : {exc}", file=sys.stderr)
        return 1
    except SimBuildError as exc:
        print(f"nvcc error   : {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"nvcc fatal   : {exc.filename or ''}: {exc.strerror}", file=sys.stderr)
        return 1
