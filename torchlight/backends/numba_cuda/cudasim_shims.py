"""Compatibility shims that make numba-cuda's simulator (``NUMBA_ENABLE_CUDASIM=1``) answer as a GPU.

Four simulator details would otherwise make its answers differ from a GPU's:

* scalar op bodies run as Python, whose ``math`` raises where a GPU gives IEEE results
  (log(0) = -inf, exp overflow = inf): ``with_ieee_math`` runs them with numpy's ufuncs;
* kernel arithmetic runs on numpy scalars, which warn on overflow and invalid operations (and
  raise under ``-W error``) where a GPU computes inf and NaN silently:
  ``quiet_simulated_float_errors`` turns those warnings off inside every simulated thread;
* every simulated thread is a Python thread, and barriers wait ~5 ms each at the default GIL
  switch interval: ``short_switch_interval`` lowers it during a launch;
* a block's shared array is created without a lock, so two threads may get private copies:
  ``lock_simulator_shared_arrays`` replaces the lookup with a locked one.

Nothing here is used on a GPU, and importing this module never imports numba.
"""

from __future__ import annotations

import contextlib
import functools
import math
import sys
import threading
import types
from collections.abc import Callable, Iterator

import numpy as np

# Switch interval while simulated threads run; the default 5 ms makes every barrier wait.
SIM_SWITCH_INTERVAL = 1e-4


def lock_simulator_shared_arrays() -> None:
    """Make the simulator hand every thread of a block the same shared array.

    numba-cuda's simulator creates a block's shared array when the first thread asks for it,
    with no lock: two threads that ask at once each get a private array, and the block then
    computes garbage. Short GIL switch intervals (see ``short_switch_interval``) make that
    likely, so the lookup is replaced by one that holds a lock. Dynamic shared memory (size 0)
    keeps the simulator's own path.
    """
    from numba.core import types as numba_types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    shared = kernelapi.FakeCUDAShared
    if getattr(shared, "_torchlight_locked", False):
        return
    simulator_array = shared.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            return simulator_array(self, shape, dtype, alignment)
        caller = sys._getframe(1)
        # The same key as the simulator's: one array per source line of the kernel.
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            found = self._allocations.get(key)
            if found is None:
                if isinstance(dtype, numba_types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                found = self._allocations[key] = np.empty(shape, dtype)
        return found

    shared.array = array
    shared._torchlight_locked = True


def quiet_simulated_float_errors() -> None:
    """Run every simulated thread with numpy's floating-point warnings off, as a GPU has none.

    numpy's error state belongs to each thread, so a launch's own ``np.errstate`` does not reach
    the simulator's threads: the state is set inside each one, around the simulator's own run.
    """
    from numba.cuda.simulator import kernel

    thread = kernel.BlockThread
    if getattr(thread, "_torchlight_quiet", False):
        return
    simulator_run = thread.run

    def run(self):
        with np.errstate(all="ignore"):
            simulator_run(self)

    thread.run = run
    thread._torchlight_quiet = True


@contextlib.contextmanager
def short_switch_interval() -> Iterator[None]:
    """Lower the GIL switch interval while simulated threads hand it around at every barrier."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(SIM_SWITCH_INTERVAL)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


class IeeeMath:
    """``math`` as a GPU computes it: log(0) is -inf and exp overflows to inf, never an exception.

    The simulator runs scalar bodies as Python, whose ``math`` raises ValueError or
    OverflowError there; numpy's ufuncs give the IEEE results (float32 in, float32 out).
    """

    def __getattr__(self, name: str):
        ufunc = getattr(np, name, None)
        if not callable(ufunc):
            return getattr(math, name) if ufunc is None else ufunc

        def quiet(*args):
            with np.errstate(all="ignore"):
                return ufunc(*args)

        return quiet


def with_ieee_math(fn: Callable) -> Callable:
    """``fn`` with IEEE semantics for the simulator: ``math`` is ``IeeeMath``, and numpy's
    scalar division by zero gives inf/nan silently, as on a GPU."""
    scope = dict(fn.__globals__)
    scope["math"] = IeeeMath()
    clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)

    @functools.wraps(fn)
    def ieee(*args):
        with np.errstate(all="ignore"):
            return clone(*args)

    return ieee
