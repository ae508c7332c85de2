"""``torchlight-sim`` (``python -m simulator`` in a checkout): ``run|check|build|nvcc|toolkit``."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from .build import DEFAULT_ARCH, SimBuildError, build_shared
from .check import run_check
from .launch_filter import LaunchFilter
from .limits import DEVICES_KNOB, TIMEOUT_GRACE_S, check_environment
from .modes import CHECK_MODES, DEFAULT_MODE, MODES
from .progress import PROGRESS_VARIABLE
from .run import LEAK_CHECKS, RACECHECK_MEMORY, ProgramInterrupted, run_program
from .supervise import ProgramKeyboardInterrupt


def _prog() -> str:
    """How the user called this command: ``torchlight-sim``, or ``python -m PACKAGE``."""
    called = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if called in ("", "__main__.py", "-c"):
        return f"python -m {__package__ or 'simulator'}"
    return called


def _version() -> str:
    try:
        from importlib.metadata import version

        return f"torchlight {version('torchlight')}"
    except Exception:  # a checkout used without installing: no metadata to read
        return "torchlight (not installed)"


class _VersionAction(argparse.Action):
    """``--version``: the installed version is looked up only when asked for (importlib.metadata
    costs a tenth of a second, which every ``run`` would otherwise pay)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        sys.stdout.write(f"{parser.prog} ({_version()})\n")
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    prog = _prog()
    p = argparse.ArgumentParser(
        prog=prog,
        description="The CUDA-on-CPU simulator: run whole programs, check kernels under sanitizers, build "
        "CUDA C sources into CPU shared objects, or compile as nvcc does.",
    )
    p.add_argument("--version", action=_VersionAction, help="show program's version number and exit")
    p.add_argument("-q", "--quiet", action="store_true", help=f"no progress lines (as {PROGRESS_VARIABLE}=0)")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    b = sub.add_parser("build", help="build each FILE.cu into DIR/FILE.so with the same exported launchers")
    b.add_argument("sources", nargs="+", metavar="FILE.cu")
    b.add_argument("--out", required=True, metavar="DIR")
    b.add_argument("--mode", default=DEFAULT_MODE, choices=MODES)
    c = sub.add_parser(
        "check",
        help=f'run extern "C" int ENTRY(void) under {", ".join(CHECK_MODES[:-1])} and/or {CHECK_MODES[-1]}',
    )
    c.add_argument(
        "sources", nargs="+", metavar="FILE.cu", help="the file defining ENTRY (and any it links with)"
    )
    c.add_argument("--entry", required=True, metavar="NAME")
    c.add_argument("--mode", default="all", choices=(*CHECK_MODES, "all"))
    c.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds per launch (default: $SIMULATOR_TIMEOUT, else 60; 0: none); "
        f"a mode is stopped up to {TIMEOUT_GRACE_S:g} s later; each compiler run of the build may take "
        "600 s or S, whichever is longer ($SIMULATOR_BUILD_TIMEOUT sets it)",
    )
    c.add_argument(
        "--verbose",
        action="store_true",
        help="print the full sanitizer output (memcheck: with the sanitizers' own reports of device faults)",
    )
    r = sub.add_parser(
        "run",
        help="build a whole program (its own main) and run it; arguments after -- go to the program",
        usage=f"{prog} run PROGRAM.cu [FILE.cu|FILE.cpp ...] [-I DIR ...] [-D NAME[=VALUE] ...] "
        "[--mode MODE] "
        "[--leak-check full|no] [--check-host] [--verbose] [--stop-on-error] [--print-limit N] "
        "[--kernel-name F] [--kernel-name-exclude F] [--launch-skip N] "
        "[--launch-count N] [--timeout S] [--devices N] [--line-buffered] [-- ARGS ...]",
    )
    r.add_argument(
        "sources", nargs="+", metavar="FILE", help="the program's .cu sources and host .cpp/.c files"
    )
    r.add_argument(
        "-I", dest="include_dirs", action="append", default=[], metavar="DIR", help="include folder"
    )
    r.add_argument(
        "-D",
        dest="defines",
        action="append",
        default=[],
        metavar="NAME[=VALUE]",
        help="define a macro for every source (as a Makefile's -D flags)",
    )
    r.add_argument("--mode", default=DEFAULT_MODE, choices=MODES)
    r.add_argument(
        "--leak-check",
        default="no",
        choices=LEAK_CHECKS,
        help="memcheck: 'full' reports device memory still allocated at exit (default: no, "
        "as compute-sanitizer)",
    )
    r.add_argument(
        "--racecheck-memory",
        default=None,
        choices=RACECHECK_MEMORY,
        help="racecheck: 'shared' (the default) judges __shared__ memory between a block's threads, "
        "as compute-sanitizer's racecheck (the simulator's own detector: a barrier costs an "
        "increment); 'all' every access, global memory and blocks of a launch too (ThreadSanitizer; "
        "slow on big blocks)",
    )
    r.add_argument(
        "--check-host",
        action="store_true",
        help="memcheck: judge sanitizer reports from host code too (default: device code only)",
    )
    r.add_argument(
        "--verbose",
        action="store_true",
        help="memcheck: print AddressSanitizer's whole report of each device fault too",
    )
    r.add_argument(
        "--stop-on-error",
        action="store_true",
        help="memcheck: stop the program at its first device fault (default: the faulting launch "
        "returns cudaErrorLaunchFailure and the program goes on, as under compute-sanitizer)",
    )
    r.add_argument(
        "--print-limit",
        type=int,
        default=None,
        metavar="N",
        help="memcheck: print the first N errors, one per faulting thread (default 100, as "
        "compute-sanitizer; 0: all); the ERROR SUMMARY counts them all",
    )
    r.add_argument(
        "--kernel-name",
        action="append",
        default=[],
        metavar="F",
        help="check only launches of kernels that match F (repeatable): kne=NAME (the whole name, as "
        "reports print it), kns=TEXT (a substring), regex=EXPR, or a bare TEXT (a substring)",
    )
    r.add_argument(
        "--kernel-name-exclude",
        action="append",
        default=[],
        metavar="F",
        help="do not check launches of kernels that match F (repeatable; forms as --kernel-name)",
    )
    r.add_argument(
        "-s",
        "--launch-skip",
        default="0",
        metavar="N",
        help="leave the first N matching launches unchecked (default 0)",
    )
    r.add_argument(
        "-c",
        "--launch-count",
        default="0",
        metavar="N",
        help="check at most N matching launches, after those skipped (default 0: all)",
    )
    r.add_argument(
        "--line-buffered",
        action="store_true",
        default=None,
        help="line-buffer the program's stdout, so that each line shows as it is printed "
        "(default: only when this command's stdout is a terminal)",
    )
    r.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds per launch (default: $SIMULATOR_TIMEOUT, else 60; 0: none); "
        f"the run is stopped up to {TIMEOUT_GRACE_S:g} s later; each compiler run of the build may take "
        "600 s or S, whichever is longer ($SIMULATOR_BUILD_TIMEOUT sets it)",
    )
    for command, who in ((c, "the entry"), (r, "the program")):
        command.add_argument(
            "--devices",
            default=None,
            metavar="N",
            help=f"modelled GPUs {who} sees, {DEVICES_KNOB.low} to {DEVICES_KNOB.high} "
            f"(default: ${DEVICES_KNOB.name}, else {DEVICES_KNOB.unset})",
        )
    for command in (b, c, r):
        command.add_argument(
            "--debug",
            action="store_true",
            help="on an error, show Python's traceback too (by default an error is one line)",
        )
        command.add_argument(
            "--arch",
            type=int,
            default=DEFAULT_ARCH,
            metavar="N",
            help=f"__CUDA_ARCH__ that device code sees (default {DEFAULT_ARCH}, the modelled sm_80)",
        )
    # nvcc and toolkit take their own command lines (main hands them over before parsing).
    sub.add_parser(
        "nvcc", help="nvcc's own command line, building code that runs on the CPU (nvcc ARGS; nvcc --help)"
    )
    sub.add_parser("toolkit", help="print a CUDA_HOME folder whose nvcc and libraries are the simulator's")
    return p


def _devices(raw: str | None) -> int | None:
    """``--devices`` as an int (None when not given); ValueError naming the value and the fix."""
    if raw is None:
        return None
    knob = DEVICES_KNOB
    if not raw.isascii() or not raw.isdigit() or not knob.low <= int(raw) <= knob.high:
        raise ValueError(
            f"--devices {raw!r} is not valid: give a whole number of {knob.what} from {knob.low} to "
            f"{knob.high}, e.g. --devices 2 (default: ${knob.name}, else {knob.unset})"
        )
    return int(raw)


def _run(args, program_args: list[str]) -> int:
    try:
        devices = _devices(args.devices)
        launches = LaunchFilter(
            tuple(args.kernel_name), tuple(args.kernel_name_exclude), args.launch_skip, args.launch_count
        )
        launches.env_for(args.mode)  # names a bad filter or count before the build
    except ValueError as exc:
        print(f"simulator: {exc}", file=sys.stderr)
        return 2
    if args.print_limit is not None and args.print_limit < 0:
        print(
            f"simulator: --print-limit {args.print_limit}: give a count of errors to print, 0 for all",
            file=sys.stderr,
        )
        return 2
    if (
        args.leak_check == "full" or args.check_host or args.stop_on_error or args.print_limit is not None
    ) and args.mode != "memcheck":
        print(
            "simulator: --leak-check full, --check-host, --stop-on-error and --print-limit are memcheck "
            f"options: add --mode memcheck (not {args.mode})",
            file=sys.stderr,
        )
        return 2
    if args.racecheck_memory is not None and args.mode != "racecheck":
        print(
            f"simulator: --racecheck-memory is a racecheck option: add --mode racecheck (not {args.mode})",
            file=sys.stderr,
        )
        return 2
    res = run_program(
        args.sources,
        args.mode,
        args.include_dirs,
        program_args,
        args.timeout,
        arch=args.arch,
        leak_check=args.leak_check,
        check_host=args.check_host,
        defines=args.defines,
        devices=devices,
        line_buffered=args.line_buffered,
        launches=launches,
        racecheck_memory=args.racecheck_memory,
        verbose=args.verbose,
        stop_on_error=args.stop_on_error,
        print_limit=args.print_limit,
    )
    if res.reports:
        print(
            f"simulator: run ({res.mode}): {len(res.reports)} report(s) from the runtime, returned to the "
            "program as CUDA errors:",
            file=sys.stderr,
        )
        for f in res.reports:
            print(f"  {f}", file=sys.stderr)
    if res.findings:
        print(f"simulator: run ({res.mode}): {len(res.findings)} finding(s):", file=sys.stderr)
        for f in res.findings:
            print(f"  {f}", file=sys.stderr)
        if res.stopped_by_checker:
            print(
                f"simulator: the program was stopped by {res.mode} (status {res.returncode})", file=sys.stderr
            )
        elif res.returncode >= 0 and not res.timed_out:
            print(f"simulator: the program exited with status {res.returncode}", file=sys.stderr)
        if res.mode == "memcheck":
            errors = len(res.findings) + res.unprinted
            print(f"========= ERROR SUMMARY: {errors} error{'' if errors == 1 else 's'}", file=sys.stderr)
            if res.unprinted:
                were = "error was" if res.unprinted == 1 else "errors were"
                print(
                    f"========= ERROR SUMMARY: {res.unprinted} {were} not printed "
                    "(--print-limit N prints the first N, 0 all)",
                    file=sys.stderr,
                )
    return res.status


# The options that come before COMMAND; none takes a value, so the first other word is COMMAND.
_QUIET = ("-q", "--quiet")
_TOP_OPTIONS = (*_QUIET, "-h", "--help", "--version")


def _command_at(argv: list[str]) -> int:
    """The index of COMMAND in ``argv``: after the options that precede it (``len(argv)`` if none)."""
    at = 0
    while at < len(argv) and argv[at] in _TOP_OPTIONS:
        at += 1
    return at


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the process exit status (an error is one line on stderr,
    with Python's traceback only under ``--debug``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    at = _command_at(argv)
    command = argv[at] if at < len(argv) else None
    if command in ("nvcc", "toolkit") and all(a in _QUIET for a in argv[:at]):
        if at > 0:
            os.environ[PROGRESS_VARIABLE] = "0"  # -q before the command, as for the others
        if command == "nvcc":  # nvcc's own command line, not this parser's
            from .nvcc import main as nvcc_main

            return nvcc_main(argv[at + 1 :])
        from .toolkit_command import main as toolkit_main

        return toolkit_main(argv[at + 1 :], prog=f"{_prog()} toolkit")
    program_args: list[str] = []
    if command == "run" and "--" in argv[at:]:
        cut = argv.index("--", at)
        argv, program_args = argv[:cut], argv[cut + 1 :]
    args = _parser().parse_args(argv)
    if args.quiet:
        os.environ[PROGRESS_VARIABLE] = "0"  # the builds here and in the program's nvcc runs
    try:
        return _command(args, program_args)
    except KeyboardInterrupt as stop:
        if args.debug:
            raise
        # While the program ran, it was stopped with this process; before, nothing had started.
        said = f"run {stop}" if isinstance(stop, ProgramKeyboardInterrupt) else "interrupted"
        print(f"simulator: {said}", file=sys.stderr)
        return 128 + signal.SIGINT
    except (OSError, ValueError, TypeError, RuntimeError) as exc:
        # The environment's or a value's fault that no check above named (a full disk, say).
        if args.debug:
            raise
        print(f"simulator: {exc}", file=sys.stderr)
        return 1


def _command(args, program_args: list[str]) -> int:
    environ = dict(os.environ)
    if getattr(args, "devices", None) is not None:
        environ.pop(DEVICES_KNOB.name, None)  # --devices wins over the variable
    try:
        check_environment(environ)
    except ValueError as exc:
        print(f"simulator: {exc}", file=sys.stderr)
        return 2
    try:
        if args.command == "run":
            return _run(args, program_args)
        if args.command == "build":
            for src in args.sources:
                out = build_shared(src, args.out, args.mode, args.arch)
                print(f"built {out} ({args.mode})")
            return 0
        try:
            devices = _devices(args.devices)
        except ValueError as exc:
            print(f"simulator: {exc}", file=sys.stderr)
            return 2
        modes = CHECK_MODES if args.mode == "all" else (args.mode,)
        failed = False
        for mode in modes:
            res = run_check(
                args.sources,
                args.entry,
                mode,
                args.timeout,
                arch=args.arch,
                devices=devices,
                verbose=args.verbose,
            )
            if res.ok:
                print(f"{mode}: clean ({args.entry} returned 0)")
                continue
            failed = True
            print(f"{mode}: FAILED")
            for f in res.findings:
                print(f"  {f}")
            raw = res.output.strip().splitlines()
            if raw:
                limit = len(raw) if args.verbose else 60
                print(f"  --- {mode} output ({len(raw)} lines{'' if args.verbose else ', first 60'}) ---")
                for ln in raw[:limit]:
                    print(f"  | {ln}")
        return 1 if failed else 0
    except BrokenPipeError:
        return 1
    except ProgramInterrupted as stop:
        print(f"simulator: run {stop}", file=sys.stderr)
        return stop.status
    except SimBuildError as exc:
        if args.debug:
            raise
        print(f"simulator: build failed: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
