"""nvcc's command line: a table of the options the simulator's ``nvcc`` knows, and its parser.

Each option has its spellings (nvcc's short and long names), whether it takes a value, and where
the parser puts it (:class:`NvccCommand`'s field ``dest``). Values are taken in every form nvcc
takes them: ``-o out``, ``--output-file=out``, attached to a one-letter name (``-Idir``, ``-DX=1``,
``-O3``, ``-lm``), and as comma lists where nvcc splits them (``-Xcompiler -fopenmp,-Wall``).
An argument that is no option's spelling is an :class:`NvccUsageError` naming it, as with nvcc.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["OPTIONS", "NvccCommand", "NvccUsageError", "expand_response_files", "parse"]


class NvccUsageError(Exception):
    """A command line nvcc would refuse (the message is nvcc's kind of one line)."""


@dataclass(frozen=True)
class Option:
    """One nvcc option: its spellings, whether it takes a value, and what the parser does with it."""

    names: tuple[str, ...]
    dest: str
    value: bool = False  # takes a value (``-o out``, ``-o=out``)
    listed: bool = False  # the value is a comma list, split into the field's items
    attached: bool = False  # the value may follow the one-letter name directly (``-Idir``)
    optional_value: bool = False  # a flag that also takes ``=value`` (``-Werror=all-warnings``)
    constant: str | None = None  # the value a flag stores (``-c`` stores the phase "compile")


# Phases: what the command produces (the last phase option given wins, as with nvcc).
PHASES = (
    "compile",
    "relocatable",
    "device-link",
    "lib",
    "shared",
    "preprocess",
    "cuda",
    "deps",
    "link",
    "fatbin",
    "cubin",
    "ptx",
)


def _phase(*names: str, phase: str) -> Option:
    return Option(names, "phase", constant=phase)


def _flag(*names: str, dest: str = "ignored", optional_value: bool = False) -> Option:
    return Option(names, dest, optional_value=optional_value, constant="1")


def _value(*names: str, dest: str = "ignored", listed: bool = False, attached: bool = False) -> Option:
    return Option(names, dest, value=True, listed=listed, attached=attached)


OPTIONS: tuple[Option, ...] = (
    # What to produce.
    _phase("-c", "--compile", phase="compile"),
    _phase("-dc", "--device-c", phase="relocatable"),
    _phase("-dlink", "--device-link", phase="device-link"),
    _phase("-lib", "--lib", phase="lib"),
    _phase("-shared", "--shared", phase="shared"),
    _phase("-E", "--preprocess", phase="preprocess"),
    _phase("-cuda", "--cuda", phase="cuda"),
    _phase("-link", "--link", phase="link"),
    # A driver API module (modules.py); -ptx writes a note, as a CPU has no PTX to give.
    _phase("-fatbin", "--fatbin", phase="fatbin"),
    _phase("-cubin", "--cubin", phase="cubin"),
    _phase("-ptx", "--ptx", phase="ptx"),
    Option(("-M", "--generate-dependencies"), "deps", constant="M"),
    Option(("-MM", "--generate-nonsystem-dependencies"), "deps", constant="MM"),
    Option(("-MD", "--generate-dependencies-with-compile"), "deps_with_compile", constant="MD"),
    Option(("-MMD", "--generate-nonsystem-dependencies-with-compile"), "deps_with_compile", constant="MMD"),
    _value("-MF", "--dependency-output", dest="deps_file"),
    _value("-MT", "--dependency-target-name", dest="deps_targets"),  # one name, the last -MT wins
    _flag("-MP", "--generate-dependency-targets", dest="deps_phony"),
    _value("-o", "--output-file", dest="output", attached=True),
    _value("-odir", "--output-directory", dest="output_dir"),
    _value("-x", "--x", dest="language", attached=True),
    # Where things are.
    _value("-I", "--include-path", dest="include_dirs", listed=True, attached=True),
    _value("-isystem", "--system-include", dest="system_include_dirs", listed=True),
    _value("-include", "--pre-include", dest="pre_includes", listed=True),
    _value("-L", "--library-path", dest="library_dirs", listed=True, attached=True),
    _value("-l", "--library", dest="libraries", listed=True, attached=True),
    _value("-D", "--define-macro", dest="defines", listed=True, attached=True),
    _value("-U", "--undefine-macro", dest="undefines", listed=True, attached=True),
    _value("-ccbin", "--compiler-bindir", dest="host_compiler"),
    _value("-Xcompiler", "--compiler-options", dest="compiler_options", listed=True),
    _value("-Xlinker", "--linker-options", dest="linker_options", listed=True),
    _value("-cudart", "--cudart", dest="cudart"),
    _value("-std", "--std", dest="std"),
    # Code generation: the GPU targets are accepted and recorded (the simulator runs one model).
    _value("-arch", "--gpu-architecture", dest="gpu_architecture", listed=True),
    _value("-code", "--gpu-code", dest="gpu_code", listed=True),
    _value("-gencode", "--generate-code", dest="generate_code"),
    _value("-rdc", "--relocatable-device-code", dest="relocatable"),
    _value("-O", "--optimize", dest="optimize", attached=True),
    _value("-dopt", "--dopt", dest="ignored"),
    _flag("-g", "--debug", dest="debug"),
    _flag("-G", "--device-debug", dest="device_debug"),
    _flag("-lineinfo", "--generate-line-info"),
    _flag("-use_fast_math", "--use_fast_math", dest="fast_math"),
    _value("-ftz", "--ftz"),
    _value("-prec-div", "--prec-div"),
    _value("-prec-sqrt", "--prec-sqrt"),
    _value("-fmad", "--fmad", dest="fmad"),
    _value("-maxrregcount", "--maxrregcount"),
    _value("-Xptxas", "--ptxas-options", listed=True),
    _value("-Xnvlink", "--nvlink-options", listed=True),
    _value("-Xcudafe", listed=True),
    _value("-Xarchive", "--archive-options", dest="archive_options", listed=True),
    _value("-default-stream", "--default-stream"),
    _value("-t", "--threads"),
    _value("-diag-suppress", "--diag-suppress", listed=True),
    _value("-diag-warn", "--diag-warn", listed=True),
    _value("-diag-error", "--diag-error", listed=True),
    _flag("--expt-relaxed-constexpr", "-expt-relaxed-constexpr"),
    _flag("--extended-lambda", "-extended-lambda", "--expt-extended-lambda", "-expt-extended-lambda"),
    _flag("-restrict", "--restrict"),
    _flag("-res-usage", "--resource-usage"),
    _flag("-src-in-ptx", "--source-in-ptx"),
    _flag("-m64", "--machine=64"),
    _flag("-keep", "--keep"),
    _value("-keep-dir", "--keep-dir"),
    _value("-optf", "--options-file", dest="options_files", listed=True),
    _flag("-forward-unknown-to-host-compiler", "--forward-unknown-to-host-compiler", dest="forward_unknown"),
    _flag("-Wno-deprecated-gpu-targets", "--Wno-deprecated-gpu-targets"),
    _flag("-Wno-deprecated-declarations", "--Wno-deprecated-declarations"),
    _flag("-Wreorder", "--Wreorder"),
    _flag("-Wext-lambda-captures-this", "--Wext-lambda-captures-this"),
    _flag("-Werror", "--Werror", dest="werror", optional_value=True),
    _flag("-w", "--disable-warnings", dest="no_warnings"),
    _flag("-v", "--verbose", dest="verbose"),
    _flag("-dryrun", "--dryrun", dest="dryrun"),
    _flag("-V", "--version", dest="version"),
    _flag("-h", "--help", dest="help"),
)

_NONE = Option((), "")
_BY_NAME: dict[str, Option] = {name: opt for opt in OPTIONS for name in opt.names}
# One-letter names whose value may be attached, longest spelling first so that "-isystem" is not "-i".
_ATTACHED = sorted((n for o in OPTIONS if o.attached for n in o.names if len(n) == 2), key=len, reverse=True)


@dataclass
class NvccCommand:
    """A parsed nvcc command line: the inputs in order, and each option's values."""

    inputs: list[str] = field(default_factory=list)
    phase: str = "link"
    values: dict[str, list[str]] = field(default_factory=dict)

    def get(self, dest: str) -> list[str]:
        """Every value given for ``dest``, in command-line order."""
        return self.values.get(dest, [])

    def last(self, dest: str, default: str | None = None) -> str | None:
        """The last value given for ``dest`` (nvcc: a repeated single-valued option's last wins)."""
        got = self.values.get(dest)
        return got[-1] if got else default

    def has(self, dest: str) -> bool:
        """Whether an option with ``dest`` was given."""
        return dest in self.values


def expand_response_files(args: list[str], depth: int = 0) -> list[str]:
    """``args`` with each ``@FILE`` replaced by the arguments FILE holds (quoted as a shell would)."""
    out: list[str] = []
    for arg in args:
        if not arg.startswith("@") or len(arg) == 1:
            out.append(arg)
            continue
        if depth > 8:
            raise NvccUsageError(f"Response file '{arg[1:]}' includes itself too deeply")
        try:
            text = Path(arg[1:]).read_text()
        except OSError as exc:
            raise NvccUsageError(f"Could not open response file '{arg[1:]}': {exc.strerror}") from None
        try:
            out += expand_response_files(shlex.split(text, comments=False), depth + 1)
        except ValueError as exc:
            raise NvccUsageError(f"Response file '{arg[1:]}' is malformed: {exc}") from None
    return out


def _split_value(opt: Option, name: str, value: str) -> list[str]:
    if value == "" and not opt.optional_value:
        raise NvccUsageError(f"Option '{name}' has an empty value")
    return [v for v in value.split(",") if v] if opt.listed else [value]


def _find(arg: str) -> tuple[Option, str, str | None]:
    """(option, the name as given, its value when attached) for one argument that starts with '-'."""
    if arg in _BY_NAME:
        return _BY_NAME[arg], arg, None
    name, eq, value = arg.partition("=")
    if eq and name in _BY_NAME:
        opt = _BY_NAME[name]
        if opt.value or opt.optional_value:
            return opt, name, value
        raise NvccUsageError(f"Option '{name}' takes no value, but was given '{value}'")
    for short in _ATTACHED:
        if arg.startswith(short) and len(arg) > len(short):
            return _BY_NAME[short], short, arg[len(short) :]
    raise NvccUsageError(f"Unknown option '{arg}'")


def parse(argv: list[str]) -> NvccCommand:
    """Parse nvcc's arguments (response files expanded first); :class:`NvccUsageError` when malformed."""
    args = expand_response_files(argv)
    forward_unknown = any(_BY_NAME.get(a, _NONE).dest == "forward_unknown" for a in args)
    cmd = NvccCommand()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            cmd.inputs.append(arg)
            continue
        try:
            opt, name, value = _find(arg)
        except NvccUsageError:
            if not forward_unknown:
                raise
            cmd.values.setdefault("compiler_options", []).append(arg)
            continue
        if opt.value and value is None:
            if i >= len(args):
                raise NvccUsageError(f"Option '{name}' needs a value")
            value = args[i]
            i += 1
        if opt.dest == "options_files":
            args[i:i] = expand_response_files([f"@{f}" for f in _split_value(opt, name, value or "")])
            continue
        if opt.dest == "phase":
            cmd.phase = opt.constant or cmd.phase
            continue
        if opt.value or (opt.optional_value and value is not None):
            cmd.values.setdefault(opt.dest, []).extend(_split_value(opt, name, value or ""))
        else:
            cmd.values.setdefault(opt.dest, []).append(opt.constant or "1")
    return cmd
