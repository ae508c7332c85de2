"""The sessions noxfile.py registers, read by running it against a stand-in ``nox`` module.

The cpu tier's virtualenv has no nox, and most tier sessions are made from the rows of
ci/tiers.py rather than written out, so reading the file's text no longer finds them: running it
with a stand-in that records each ``nox.session`` registration does, with standard Python only.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOXFILE = ROOT / "noxfile.py"


@dataclass
class Registered:
    """One registered session: its function, docstring and the keyword arguments of ``nox.session``."""

    function: Callable[..., Any]
    doc: str
    options: dict[str, Any] = field(default_factory=dict)


class CommandFailed(Exception):
    """Stands in for nox.command.CommandFailed."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason


class PassthroughEnv:
    """Stands in for nox.virtualenv.PassthroughEnv (``nox --no-venv``)."""


@dataclass
class Noxfile:
    """What loading noxfile.py registered: sessions in order, nox.options, the module itself."""

    sessions: dict[str, Registered]
    options: SimpleNamespace
    module: ModuleType


def _stand_in() -> tuple[dict[str, ModuleType], dict[str, Registered], SimpleNamespace]:
    registry: dict[str, Registered] = {}
    options = SimpleNamespace()

    def session(func: Callable[..., Any] | None = None, **kwargs: Any) -> Any:
        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            name = kwargs.get("name") or f.__name__
            if name in registry:
                raise ValueError(f"noxfile.py registers session {name!r} twice")
            registry[name] = Registered(f, (f.__doc__ or "").strip(), dict(kwargs))
            return f

        return register(func) if func is not None else register

    nox = ModuleType("nox")
    nox.session = session
    nox.options = options
    nox.Session = object
    command = ModuleType("nox.command")
    command.CommandFailed = CommandFailed
    virtualenv = ModuleType("nox.virtualenv")
    virtualenv.PassthroughEnv = PassthroughEnv
    nox.command, nox.virtualenv = command, virtualenv
    return {"nox": nox, "nox.command": command, "nox.virtualenv": virtualenv}, registry, options


@contextmanager
def _modules(replacements: dict[str, ModuleType]) -> Iterator[None]:
    saved = {name: sys.modules.get(name) for name in replacements}
    sys.modules.update(replacements)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def load_noxfile(path: Path = NOXFILE) -> Noxfile:
    """Run ``path`` with the stand-in nox; its sessions in registration order (``nox -l``'s)."""
    modules, registry, options = _stand_in()
    spec = importlib.util.spec_from_file_location("noxfile_under_test", path)
    module = importlib.util.module_from_spec(spec)
    with _modules(modules):
        spec.loader.exec_module(module)
    return Noxfile(registry, options, module)


def nox_sessions() -> dict[str, str]:
    """Session name -> docstring (what ``nox -l`` shows) of every session noxfile.py registers."""
    return {name: s.doc for name, s in load_noxfile().sessions.items()}
