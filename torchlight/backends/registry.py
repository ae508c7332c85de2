"""The one backend registry: each backend's name and builder, and what each device name means here.

``BACKENDS`` lists every backend: its name, how to build it, and why it cannot be built here.
Everything that lists backends reads it: the test fixture (``TORCHLIGHT_TEST_BACKENDS`` names),
``python -m torchlight info`` and the matrix report's column order. Adding a backend is adding
one ``BackendEntry`` below.

``DEVICES`` says which backend a device name resolves to and why: for ``"cuda"``, the CUDA C
kernels when their libraries are found, else numba-cuda, and the ``TORCHLIGHT_CUDA_FALLBACK``
rule when neither can run. ``get_backend`` reads it through ``device_backend`` the first time
a device is named; ``explain_device`` says the same in words (``python -m torchlight info``
prints it).

``get_backend`` finds a backend in one hop: every device hint it has resolved ("cpu",
``Device("cuda:0")``, a backend it built) is a key of one table of built backends, so a
tensor op that names its device pays one dictionary lookup, not the rule and the builder.

Builders import their modules on call, so importing this module never imports numba, and
the module imports only the standard library: ``ci/matrix_report.py`` loads this file alone,
without torchlight or numpy installed. No backend module imports this one.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Backend

FALLBACK_ENV = "TORCHLIGHT_CUDA_FALLBACK"
DEVICE_ENV = "TORCHLIGHT_DEVICE"


@dataclass(frozen=True)
class BackendEntry:
    """One backend: its registry name, what it is, and how to build it."""

    name: str
    summary: str
    build: Callable[[], Backend]  # its one builder: the matrix column and get_backend both call it
    packages: tuple[str, ...] = ()  # import names it needs; `install` says how to get them
    install: str = ""

    def missing_packages(self) -> str | None:
        """None when every package the backend needs is importable, else which are not and the fix."""
        missing = [name for name in self.packages if not _importable(name)]
        if not missing:
            return None
        return f"{', '.join(missing)} not installed ({self.install})"

    def unavailable_reason(self) -> str | None:
        """None when the backend builds on this machine, else the first line of why not."""
        try:
            self.build()
        except Exception as err:  # any failure to build is the answer, not an error here
            return describe_error(err)
        return None


def _importable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a module blocked as None in sys.modules, or a broken one
        return False


def describe_error(err: BaseException) -> str:
    """``"<Type>: <first line of the message>"`` of an exception."""
    text = str(err).strip()
    return f"{type(err).__name__}: {text.splitlines()[0]}" if text else type(err).__name__


# --- builders ------------------------------------------------------------------------------------


def _cpu() -> Backend:
    from .cpu import cpu_backend

    return cpu_backend()


def _numba() -> Backend:
    from .numba_twin.backend import numba_backend

    return numba_backend()


def _cuda() -> Backend:
    from .numba_cuda.backend import CudaBackend
    from .numba_cuda.provider import CudaProvider

    return CudaBackend(provider=CudaProvider())


def _cuda_c() -> Backend:
    from .cuda_c.provider import CudaCKernelProvider
    from .numba_cuda.backend import CudaBackend

    return CudaBackend(provider=CudaCKernelProvider())


BACKENDS: dict[str, BackendEntry] = {
    entry.name: entry
    for entry in (
        BackendEntry("cpu", "numpy reference (CPUBackend)", _cpu),
        BackendEntry(
            "numba",
            "numba CPU twin of the CUDA kernels (NumbaBackend)",
            _numba,
            packages=("numba",),
            install='pip install "torchlight[numba]"',
        ),
        BackendEntry(
            "cuda",
            "numba-cuda kernels on a GPU or its simulator (CudaBackend + CudaProvider)",
            _cuda,
            packages=("numba", "numba_cuda"),
            install='pip install "torchlight[cuda]"',
        ),
        BackendEntry(
            "cuda-c",
            "CUDA C fused kernels via ctypes, the rest numba-cuda (CudaBackend + CudaCKernelProvider)",
            _cuda_c,
            packages=("numba", "numba_cuda"),
            install='pip install "torchlight[cuda]", then build the kernel libraries',
        ),
    )
}


def backend_names() -> list[str]:
    """Every registered backend name, in registry (and report) order."""
    return list(BACKENDS)


# --- what a device name means ---------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """One candidate backend of a device: taken when ``when()`` gives a reason (None: not here)."""

    backend: str  # a BACKENDS name
    when: Callable[[], str | None]


@dataclass(frozen=True)
class DeviceRule:
    """Which backend ``get_backend(device)`` builds: the first choice that applies, and the fallback."""

    device: str
    choices: tuple[Choice, ...]
    fallback_env: str | None = None  # names a backend to use when the choice cannot run here
    fallbacks: tuple[str, ...] = ()  # the BACKENDS names fallback_env accepts
    unavailable: Callable[[BaseException], bool] | None = None  # which build errors allow the fallback

    def choose(self) -> tuple[str, str]:
        """``(backend name, why)`` of the first choice that applies on this machine."""
        for choice in self.choices:
            why = choice.when()
            if why is not None:
                return choice.backend, why
        raise ValueError(f"no backend applies to device {self.device!r} here")  # a rule ends with a catch-all

    def fallback_choice(self, environ: Mapping[str, str] | None = None) -> str | None:
        """The fallback the environment asks for (None when unset); ValueError on an unknown one."""
        if self.fallback_env is None:
            return None
        env = os.environ if environ is None else environ
        value = env.get(self.fallback_env, "").strip().lower()
        if not value:
            return None
        if value not in self.fallbacks:
            raise ValueError(
                f"{self.fallback_env}={env.get(self.fallback_env)!r} is not a fallback: use "
                f"{' or '.join(self.fallbacks)} ({BACKENDS[self.fallbacks[0]].summary}), or unset it "
                f"to get an error when {self.device.upper()} is unavailable"
            )
        return value


def _always(why: str) -> Callable[[], str]:
    return lambda: why


def _cuda_c_libraries() -> str | None:
    from .cuda_c.loader import find_kernel_dir

    directory = find_kernel_dir()  # a configured directory that is broken raises: never a silent switch
    if directory is None:
        return None
    return f"CUDA C kernel libraries found in {directory}: float32 fused ops run them, the rest numba-cuda"


def _no_cuda_c_libraries() -> str:
    from .cuda_c.loader import DEFAULT_KERNEL_DIR, KERNEL_DIR_ENV

    return (
        f"no CUDA C kernel libraries ({KERNEL_DIR_ENV} unset, none in {DEFAULT_KERNEL_DIR}): "
        "every op runs numba-cuda kernels"
    )


def _cuda_unavailable(err: BaseException) -> bool:
    from .numba_cuda.kernels import CudaUnavailableError

    return isinstance(err, (ImportError, CudaUnavailableError))


DEVICES: dict[str, DeviceRule] = {
    rule.device: rule
    for rule in (
        DeviceRule("cpu", (Choice("cpu", _always("the numpy reference")),)),
        DeviceRule(
            "cuda",
            (Choice("cuda-c", _cuda_c_libraries), Choice("cuda", _no_cuda_c_libraries)),
            fallback_env=FALLBACK_ENV,
            fallbacks=("numba",),
            unavailable=_cuda_unavailable,
        ),
    )
}

# The built backends, keyed by device type and by every other hint get_backend resolved to them.
_DEVICE_BACKENDS: dict[object, Backend] = {}
_DEVICE_BACKENDS_LOCK = threading.Lock()  # threads asking at once share one backend


def get_backend(device: object = None) -> Backend:
    """Resolve None (``TORCHLIGHT_DEVICE``, else CPU), a Device, a string or a backend."""
    key = device
    if device is None:
        key = os.environ.get(DEVICE_ENV, "").strip() or "cpu"
    try:
        found = _DEVICE_BACKENDS.get(key)
    except TypeError:  # an unhashable hint (a list, ...): the full resolution names it
        found = None
    if found is None:
        return _resolve(device)
    rule = DEVICES.get(found.device.type)
    if rule is not None and rule.fallback_env is not None:
        rule.fallback_choice()  # an unknown value is refused on every call, cached or not
    return found


def _resolve(device: object) -> Backend:
    """``get_backend`` for a hint not yet in the table: parse it, follow its rule, remember it."""
    from ..core.device import Device
    from .base import Backend

    if isinstance(device, Backend):
        _remember(device, device)
        return device
    if device is None:
        spec = os.environ.get(DEVICE_ENV, "").strip()
        if not spec:
            return _cpu()
        try:
            device = Device(spec)
        except ValueError as err:
            raise ValueError(f"{DEVICE_ENV}={spec!r} is not a device: {err}") from None
    hint = device
    if not isinstance(device, Device):
        device = Device(device)
    if device.index not in (None, 0):
        raise ValueError(
            f"device {str(device)!r} is not available: torchlight drives one GPU, use 'cuda' or 'cuda:0'"
        )
    backend = device_backend(device.type)
    _remember(hint, backend)
    return backend


def _remember(hint: object, backend: Backend) -> None:
    """Key ``hint`` to ``backend`` when it is the one the table holds for its device (never a fallback)."""
    with _DEVICE_BACKENDS_LOCK:
        if _DEVICE_BACKENDS.get(backend.device.type) is backend:
            _DEVICE_BACKENDS[hint] = backend


def device_rule(device_type: str) -> DeviceRule:
    """The rule ``get_backend`` uses for a device type ("cpu", "cuda")."""
    rule = DEVICES.get(device_type)
    if rule is None:
        raise ValueError(f"no backend is registered for device type {device_type!r}")
    return rule


def device_backend(device_type: str) -> Backend:
    """The cached backend ``get_backend(device_type)`` returns; the rule's fallback when it cannot run."""
    rule = device_rule(device_type)
    fallback = rule.fallback_choice()  # an unknown value is refused on every call, cached or not
    with _DEVICE_BACKENDS_LOCK:
        cached = _DEVICE_BACKENDS.get(device_type)
        if cached is not None:
            return cached
        name, _ = rule.choose()
        try:
            backend = BACKENDS[name].build()
        except Exception as err:
            if fallback is None or rule.unavailable is None or not rule.unavailable(err):
                raise
            return _fallback(rule, err, fallback)
        _DEVICE_BACKENDS[device_type] = backend
        return backend


def cuda_backend() -> Backend:
    """The cached backend ``get_backend("cuda")`` returns (the numba twin under the fallback rule)."""
    return device_backend("cuda")


def _fallback(rule: DeviceRule, err: BaseException, fallback: str) -> Backend:
    """The fallback backend with one warning at the user's line; or one ImportError when it cannot be."""
    entry = BACKENDS[fallback]
    device = rule.device
    reason = getattr(err, "reason", None) or str(err).split(". ")[0]
    missing = [name for name in entry.packages if not _importable(name)]
    if missing:
        # The fallback cannot happen: say so once, with the one thing to install.
        raise ImportError(
            f"get_backend({device!r}): {device.upper()} is unavailable ({reason}), and "
            f"{rule.fallback_env}={fallback} needs {', '.join(missing)}, which is not installed "
            f"either: {entry.install}"
        ) from None
    warnings.warn(
        f"{device.upper()} is unavailable ({reason}): get_backend({device!r}) returns the "
        f"{entry.summary}, as {rule.fallback_env}={fallback} asks, so tensors stay on the CPU",
        RuntimeWarning,
        stacklevel=caller_stacklevel(),
    )
    return entry.build()


def explain_device(device_type: str) -> str:
    """What ``get_backend(device_type)`` means on this machine, and why, in one line."""
    rule = device_rule(device_type)
    try:
        name, why = rule.choose()
        text = f"{device_type} -> {name}: {why}"
    except Exception as err:  # e.g. a configured kernel directory that is broken: that is the answer
        text = f"{device_type} -> error: {describe_error(err)}"
    if rule.fallback_env is None:
        return text
    try:
        fallback = rule.fallback_choice()
    except ValueError as err:
        return f"{text}; {describe_error(err)}"
    if fallback is None:
        return (
            f"{text}; where it cannot run, an error ({rule.fallback_env} unset; "
            f"set it to {' or '.join(rule.fallbacks)} to fall back)"
        )
    return f"{text}; where it cannot run, {fallback} ({rule.fallback_env}={fallback})"


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def caller_stacklevel() -> int:
    """``warnings.warn``'s stacklevel for the first frame outside torchlight: the user's line."""
    frame = sys._getframe(1)  # the function that will call warnings.warn
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR + os.sep):
        frame = frame.f_back
        level += 1
    return level
