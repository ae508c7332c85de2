"""Which launches a checker checks: compute-sanitizer's kernel filters and launch counts.

``run --kernel-name``, ``--kernel-name-exclude``, ``--launch-skip`` and ``--launch-count`` pick
the launches that memcheck, racecheck and synccheck judge; the others run unchecked (racecheck
runs them without a ThreadSanitizer fiber per CUDA thread, so they cost little). The program
reads the choice from ``SIMULATOR_KERNEL_NAME``, ``SIMULATOR_KERNEL_NAME_EXCLUDE``,
``SIMULATOR_LAUNCH_SKIP`` and ``SIMULATOR_LAUNCH_COUNT`` (``runtime/launch_filter.cpp``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .modes import TABLE, mode_named

try:  # the standard library's parser of regular expressions: re._parser from Python 3.11
    import re._parser as _regex_parser
except ImportError:  # Python 3.10
    import sre_parse as _regex_parser  # type: ignore[no-redef]

# compute-sanitizer's keys, long and short, by the short one the runtime reads.
_KEYS = {"kernel_name": "kne", "kne": "kne", "kernel_substring": "kns", "kns": "kns"}
_FORMS = "kne=NAME (the whole name), kns=TEXT (a substring), regex=EXPR, or a bare TEXT (a substring)"


# At most this many unbounded repeats in one expression: the runtime matches with std::regex, which
# backtracks, and k of them can take a name's length to the k-th power of steps.
MAX_OPEN_REPEATS = 3
_REPEATS = {_regex_parser.MAX_REPEAT, _regex_parser.MIN_REPEAT}


def _parts(op, av) -> list:
    """The sub-expressions of one node of a parsed regular expression."""
    if op in _REPEATS:
        return [av[2]]
    if op is _regex_parser.SUBPATTERN:
        return [av[3]]
    if op is _regex_parser.BRANCH:
        return list(av[1])
    if op in (_regex_parser.ASSERT, _regex_parser.ASSERT_NOT):
        return [av[1]]
    if op is _regex_parser.GROUPREF_EXISTS:
        return [p for p in av[1:] if p is not None]
    return [av] if op is getattr(_regex_parser, "ATOMIC_GROUP", None) else []


def _backtracking_hazard(pattern, inside_repeat: bool = False) -> str | None:
    """Why matching ``pattern`` (parsed) may backtrack without bound, or None."""
    for op, av in pattern:
        if op in (_regex_parser.GROUPREF, _regex_parser.GROUPREF_EXISTS):
            return "a backreference"
        repeated = op in _REPEATS and av[1] > 1
        if inside_repeat and (repeated or op is _regex_parser.BRANCH):
            return "a repeated group that holds a repeat or an alternation, such as (a+)+ or (ab|a)*"
        for part in _parts(op, av):
            hazard = _backtracking_hazard(part, inside_repeat or repeated)
            if hazard:
                return hazard
    return None


def _open_repeats(pattern) -> int:
    count = 0
    for op, av in pattern:
        if op in _REPEATS and av[1] == _regex_parser.MAXREPEAT:
            count += 1
        count += sum(_open_repeats(part) for part in _parts(op, av))
    return count


def _check_cost(option: str, value: str, expr: str) -> None:
    """ValueError for an expression std::regex could take exponential (or a high power of) time on."""
    parsed = _regex_parser.parse(expr)
    hazard = _backtracking_hazard(parsed)
    if hazard is None and _open_repeats(parsed) > MAX_OPEN_REPEATS:
        hazard = f"more than {MAX_OPEN_REPEATS} unbounded repeats (* or +)"
    if hazard:
        raise ValueError(
            f"{option} {value!r}: {expr!r} has {hazard}, which can make matching a kernel's name take "
            "longer than the run; write it without (e.g. a+ for (a+)+), or match a substring with kns=TEXT"
        )


def parse_kernel_filter(option: str, value: str) -> list[tuple[str, str]]:
    """``(key, text)`` pairs of one ``--kernel-name``/``--kernel-name-exclude`` value.

    ``kne=NAME,kns=TEXT`` as compute-sanitizer writes them; ``regex=EXPR`` (or ``regex:EXPR``)
    takes the rest of the value, commas included; a value without a key is a substring.
    ValueError naming the value and the forms for an unknown key, an empty text or a bad
    regular expression, or one whose matching may backtrack without bound (a backreference, a
    repeated group holding a repeat or an alternation, more than ``MAX_OPEN_REPEATS`` unbounded
    repeats): the runtime matches with ``std::regex``, which backtracks.
    """
    for prefix in ("regex=", "regex:"):
        if value.startswith(prefix):
            expr = value[len(prefix) :]
            try:
                re.compile(expr)
            except re.error as exc:
                raise ValueError(f"{option} {value!r}: {expr!r} is not a regular expression: {exc}") from None
            if not expr:
                raise ValueError(f"{option} {value!r}: give an expression after 'regex=', e.g. regex=^reduce")
            _check_cost(option, value, expr)
            return [("regex", expr)]
    if "=" not in value:
        if not value:
            raise ValueError(f"{option} '': give a kernel name: {_FORMS}")
        return [("kns", value)]
    pairs = []
    for part in value.split(","):
        key, sep, text = part.partition("=")
        if not sep or key not in _KEYS or not text:
            raise ValueError(f"{option} {value!r}: {part!r} is not KEY=VALUE with a known key; give {_FORMS}")
        pairs.append((_KEYS[key], text))
    return pairs


def _count(option: str, value: int | str) -> int:
    """A launch count from the command line or the API; ValueError naming it otherwise."""
    digits = isinstance(value, str) and value.isascii() and value.isdigit()
    if not digits and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"{option} {value!r}: give a whole number of launches, 0 or more")
    return int(value)


@dataclass(frozen=True)
class LaunchFilter:
    """The launches a checker checks (every launch by default).

    ``kernel_names``/``kernel_names_exclude`` are ``--kernel-name``/``--kernel-name-exclude``
    values (see :func:`parse_kernel_filter`); a launch is counted when it matches one kernel
    name (or none is given) and no exclusion. Of the counted launches, the first ``skip`` run
    unchecked, then ``count`` are checked (0: all the rest), as compute-sanitizer's
    ``--launch-skip``/``--launch-count``. Names are those the simulator's reports print: the
    kernel as the launch names it, with its template arguments (``MatrixMulCUDA<32>``).
    """

    kernel_names: tuple[str, ...] = ()
    kernel_names_exclude: tuple[str, ...] = ()
    skip: int | str = 0
    count: int | str = 0

    def env_for(self, mode: str) -> dict[str, str]:
        """:meth:`env` for a run in ``mode``; ValueError in ``fast`` mode, which checks no launch."""
        env = self.env()
        if env and not mode_named(mode).checker:
            *most, last = [m.name for m in TABLE if m.checker]
            raise ValueError(
                "--kernel-name, --kernel-name-exclude, --launch-skip and --launch-count choose the launches "
                f"a checker checks: add --mode {', '.join(most)} or {last} ({mode} mode checks none)"
            )
        return env

    def env(self) -> dict[str, str]:
        """The program's ``SIMULATOR_KERNEL_NAME*``/``SIMULATOR_LAUNCH_*`` variables (validated)."""
        out = {}
        for var, option, values in (
            ("SIMULATOR_KERNEL_NAME", "--kernel-name", self.kernel_names),
            ("SIMULATOR_KERNEL_NAME_EXCLUDE", "--kernel-name-exclude", self.kernel_names_exclude),
        ):
            pairs = [p for v in values for p in parse_kernel_filter(option, v)]
            if any("\n" in text for _, text in pairs):
                raise ValueError(f"{option}: a kernel name has no newline")
            if pairs:
                out[var] = "\n".join(f"{k}\t{t}" for k, t in pairs)
        skip, count = _count("--launch-skip", self.skip), _count("--launch-count", self.count)
        if skip:
            out["SIMULATOR_LAUNCH_SKIP"] = str(skip)
        if count:
            out["SIMULATOR_LAUNCH_COUNT"] = str(count)
        return out
