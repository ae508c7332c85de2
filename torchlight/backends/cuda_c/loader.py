"""The CUDA C kernel libraries through ctypes: finding and loading them, launcher signatures, error codes.

The libraries ``softmax_kernel.so`` and ``layernorm_kernel.so`` are built from
``torchlight/cuda_kernels/*.cu`` by ``python -m torchlight build-kernels`` (nvcc, for a GPU) or
``python -m torchlight build-kernels --simulator`` (g++, for the CPU); both export the same
launchers. Each launcher takes host pointers and int64 sizes, does its own device allocation
and copies, and returns 0 or an error code. Nothing leaves Python for C before the operands are
checked here: float32 only, C-contiguous (copies are made), shapes and sizes as the fused-op
contract says; a broadcast attention mask goes as its own elements plus strides.

``CudaCKernels`` runs the four fused ops through a loaded pair of libraries; the provider that
routes float32 fused ops to it is ``provider.CudaCKernelProvider``. Importing this module never
imports numba.
"""

from __future__ import annotations

import ctypes
import importlib
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...core.tensor_data import TensorData
from ..checks import attn_softmax_inputs, check_layernorm, check_layernorm_bw, check_same_shape, compact_mask

KERNEL_DIR_ENV = "TORCHLIGHT_CUDA_KERNEL_DIR"
DEFAULT_KERNEL_DIR = Path(__file__).resolve().parents[2] / "cuda_kernels"
# 2: tl_attn_softmax_fw_strided (masks broadcast by strides); see tl_common.cuh.
ABI_VERSION = 2
FLOAT32 = np.dtype(np.float32)

_PTR = ctypes.c_void_p
_I64 = ctypes.c_int64

# The one table of launcher signatures: library -> ABI-version symbol and {launcher: argtypes}.
# Every launcher returns a C int (0 or an error code).
LIBRARIES: dict[str, tuple[str, dict[str, tuple]]] = {
    "softmax_kernel": (
        "tl_softmax_abi_version",
        {
            # x, mask (nullable, [batch, k_len]), y, batch, heads, q_len, k_len, causal
            "tl_attn_softmax_fw": (_PTR, _PTR, _PTR, _I64, _I64, _I64, _I64, ctypes.c_int),
            # x, mask (nullable), y, batch, heads, q_len, k_len, the mask's 4 element strides, causal
            "tl_attn_softmax_fw_strided": (_PTR, _PTR, _PTR, *(_I64,) * 8, ctypes.c_int),
            # y, dy, dx, rows, k_len
            "tl_attn_softmax_bw": (_PTR, _PTR, _PTR, _I64, _I64),
        },
    ),
    "layernorm_kernel": (
        "tl_layernorm_abi_version",
        {
            # x, gamma, beta, y, mean, rstd, rows, hidden, eps
            "tl_layernorm_fw": (_PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _I64, _I64, ctypes.c_float),
            # dy, x, gamma, mean, rstd, dx, dgamma, dbeta, rows, hidden
            "tl_layernorm_bw": (_PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _PTR, _I64, _I64),
        },
    ),
}

BUILD_COMMAND = "python -m torchlight build-kernels"
BUILD_HINT = (
    f"build them with `{BUILD_COMMAND}` (nvcc, for a GPU) or `{BUILD_COMMAND} --simulator` (for the "
    f"CPU); it prints where they went and, when the loader needs it, the {KERNEL_DIR_ENV} line to set"
)

# Codes the launchers return for arguments they refuse (see torchlight/cuda_kernels/tl_common.cuh).
TL_ERRORS = {
    20001: "TL_ERR_NEGATIVE_SIZE",
    20002: "TL_ERR_NULL_POINTER",
    20003: "TL_ERR_SIZE_OVERFLOW",
    20004: "TL_ERR_BAD_ARGUMENT",
}

# cudaError_t values (CUDA 13 driver_types.h), "code:name-without-cudaError".
_CUDA_ERROR_TABLE = """
1:InvalidValue 2:MemoryAllocation 3:InitializationError 4:CudartUnloading 5:ProfilerDisabled
6:ProfilerNotInitialized 7:ProfilerAlreadyStarted 8:ProfilerAlreadyStopped 9:InvalidConfiguration
12:InvalidPitchValue 13:InvalidSymbol 16:InvalidHostPointer 17:InvalidDevicePointer
18:InvalidTexture 19:InvalidTextureBinding 20:InvalidChannelDescriptor 21:InvalidMemcpyDirection
22:AddressOfConstant 23:TextureFetchFailed 24:TextureNotBound 25:SynchronizationError
26:InvalidFilterSetting 27:InvalidNormSetting 28:MixedDeviceExecution 31:NotYetImplemented
32:MemoryValueTooLarge 34:StubLibrary 35:InsufficientDriver 36:CallRequiresNewerDriver
37:InvalidSurface 43:DuplicateVariableName 44:DuplicateTextureName 45:DuplicateSurfaceName
46:DevicesUnavailable 49:IncompatibleDriverContext 52:MissingConfiguration 53:PriorLaunchFailure
65:LaunchMaxDepthExceeded 66:LaunchFileScopedTex 67:LaunchFileScopedSurf 68:SyncDepthExceeded
69:LaunchPendingCountExceeded 98:InvalidDeviceFunction 100:NoDevice 101:InvalidDevice
102:DeviceNotLicensed 103:SoftwareValidityNotEstablished 127:StartupFailure 200:InvalidKernelImage
201:DeviceUninitialized 205:MapBufferObjectFailed 206:UnmapBufferObjectFailed 207:ArrayIsMapped
208:AlreadyMapped 209:NoKernelImageForDevice 210:AlreadyAcquired 211:NotMapped 212:NotMappedAsArray
213:NotMappedAsPointer 214:ECCUncorrectable 215:UnsupportedLimit 216:DeviceAlreadyInUse
217:PeerAccessUnsupported 218:InvalidPtx 219:InvalidGraphicsContext 220:NvlinkUncorrectable
221:JitCompilerNotFound 222:UnsupportedPtxVersion 223:JitCompilationDisabled
224:UnsupportedExecAffinity 225:UnsupportedDevSideSync 226:Contained 300:InvalidSource
301:FileNotFound 302:SharedObjectSymbolNotFound 303:SharedObjectInitFailed 304:OperatingSystem
400:InvalidResourceHandle 401:IllegalState 402:LossyQuery 500:SymbolNotFound 600:NotReady
700:IllegalAddress 701:LaunchOutOfResources 702:LaunchTimeout 703:LaunchIncompatibleTexturing
704:PeerAccessAlreadyEnabled 705:PeerAccessNotEnabled 708:SetOnActiveProcess 709:ContextIsDestroyed
710:Assert 711:TooManyPeers 712:HostMemoryAlreadyRegistered 713:HostMemoryNotRegistered
714:HardwareStackError 715:IllegalInstruction 716:MisalignedAddress 717:InvalidAddressSpace
718:InvalidPc 719:LaunchFailure 720:CooperativeLaunchTooLarge 721:TensorMemoryLeak 800:NotPermitted
801:NotSupported 802:SystemNotReady 803:SystemDriverMismatch 804:CompatNotSupportedOnDevice
805:MpsConnectionFailed 806:MpsRpcFailure 807:MpsServerNotReady 808:MpsMaxClientsReached
809:MpsMaxConnectionsReached 810:MpsClientTerminated 811:CdpNotSupported 812:CdpVersionMismatch
900:StreamCaptureUnsupported 901:StreamCaptureInvalidated 902:StreamCaptureMerge
903:StreamCaptureUnmatched 904:StreamCaptureUnjoined 905:StreamCaptureIsolation
906:StreamCaptureImplicit 907:CapturedEvent 908:StreamCaptureWrongThread 909:Timeout
910:GraphExecUpdateFailure 911:ExternalDevice 912:InvalidClusterSize 913:FunctionNotLoaded
914:InvalidResourceType 915:InvalidResourceConfiguration 999:Unknown
"""
CUDA_ERRORS: dict[int, str] = {
    int(code): f"cudaError{name}" for code, name in (entry.split(":") for entry in _CUDA_ERROR_TABLE.split())
}

_NO_GPU_HINT = (
    "no NVIDIA driver/GPU is usable on this machine: build the CPU version of these libraries "
    f"(`{BUILD_COMMAND} --simulator --out DIR`, then {KERNEL_DIR_ENV}=DIR and NUMBA_ENABLE_CUDASIM=1) "
    "or use the numba CPU twin (torchlight.backends.cuda.numba_backend())"
)
_REBUILD_HINT = (
    "the library holds no code this GPU can run: rebuild it with this GPU's SM version, e.g. "
    f"`{BUILD_COMMAND} --arch '80;90;100'` (or TORCHLIGHT_CUDA_ARCHS='80;90;100')"
)
# The errors CUDA documents as sticky ("leaves the process in an inconsistent state and any
# further CUDA work will return the same error"): illegal address, launch timeout, device
# assert, hardware stack error, illegal instruction, misaligned address, invalid address space,
# invalid PC, launch failure. The launchers clear every other error, so none of these survives
# into a later call unless the context is really broken.
STICKY_ERRORS = frozenset((700, 702, 710, 714, 715, 716, 717, 718, 719))


def _sticky_hint(code: int) -> str:
    name = CUDA_ERRORS.get(code, str(code))
    return (
        f"the CUDA context is broken by this or an earlier error ({name}, a kernel fault): every "
        "later CUDA call in this process fails the same way, so restart the process; to find the "
        "faulting kernel, rerun under compute-sanitizer (or the simulator's memcheck build)"
    )


_HINTS: dict[int, str] = {
    **{code: _sticky_hint(code) for code in STICKY_ERRORS},
    **dict.fromkeys((3, 34, 35, 100), _NO_GPU_HINT),
    46: "every GPU is busy or in exclusive-process mode: free one or change its compute mode (nvidia-smi -c)",
    **dict.fromkeys(
        (36, 803),
        "the NVIDIA driver is older than the CUDA runtime the kernels were built "
        "with: update the driver, or rebuild the kernels with a toolkit the driver supports",
    ),
    **dict.fromkeys((98, 200, 209, 218, 222), _REBUILD_HINT),
    2: "the GPU ran out of memory: use smaller tensors or free GPU memory held by other processes",
    **dict.fromkeys(
        tuple(TL_ERRORS),
        "the launcher refused its arguments, which the Python checks should have caught first: "
        "report this with the operand shapes",
    ),
}
_DEFAULT_HINT = (
    "a CUDA call or kernel failed; rerun under compute-sanitizer (or the simulator's memcheck build) "
    "to find where"
)


class KernelLibraryError(RuntimeError):
    """The kernel libraries are missing, unloadable or not torchlight kernel libraries."""


class CudaCKernelError(RuntimeError):
    """A launcher returned a nonzero code; ``code`` and ``error_name`` say which, and ``sticky``
    whether the CUDA context is broken for the rest of the process."""

    def __init__(self, launcher: str, code: int) -> None:
        self.launcher = launcher
        self.code = code
        self.error_name = error_name(code)
        self.sticky = code in STICKY_ERRORS
        super().__init__(f"{launcher} failed with {self.error_name} (code {code}): {error_hint(code)}")


def error_name(code: int) -> str:
    """The cudaError_t (or launcher TL_ERR_*) name for a launcher return code."""
    if code in TL_ERRORS:
        return TL_ERRORS[code]
    return CUDA_ERRORS.get(code, f"unknown CUDA error {code}")


def error_hint(code: int) -> str:
    """What to do about a launcher return code."""
    return _HINTS.get(code, _DEFAULT_HINT)


def library_paths(directory: str | os.PathLike) -> dict[str, Path]:
    """The path of each kernel library inside ``directory``."""
    return {name: Path(directory) / f"{name}.so" for name in LIBRARIES}


def _build_into(directory: str) -> str:
    """The command that builds the libraries into ``directory``."""
    return (
        f"build them there with `{BUILD_COMMAND} --out {directory}` (nvcc, for a GPU) or "
        f"`{BUILD_COMMAND} --simulator --out {directory}` (for the CPU)"
    )


def find_kernel_dir() -> Path | None:
    """The kernel library directory: ``$TORCHLIGHT_CUDA_KERNEL_DIR``, else the package's own, else None.

    An explicitly set directory must exist and hold both libraries (KernelLibraryError
    otherwise, never a silent switch to another backend). An empty value counts as unset.
    """
    configured = os.environ.get(KERNEL_DIR_ENV, "")
    if configured:
        directory = Path(configured)
        if not directory.is_dir():
            raise KernelLibraryError(
                f"{KERNEL_DIR_ENV}={configured!r} is not a directory: point it at the directory that "
                f"holds the kernel libraries, or {_build_into(configured)}"
            )
        missing = [str(p) for p in library_paths(directory).values() if not p.is_file()]
        if missing:
            raise KernelLibraryError(
                f"{KERNEL_DIR_ENV}={configured!r} lacks {', '.join(missing)}: {_build_into(configured)}"
            )
        return directory
    if all(p.is_file() for p in library_paths(DEFAULT_KERNEL_DIR).values()):
        return DEFAULT_KERNEL_DIR
    return None


def _open_library(path: Path) -> ctypes.CDLL:
    # dlopen of a truncated file dies with SIGBUS, and one for another machine reports a
    # misleading "No such file": check the ELF header and tables first.
    from .shared_object import SharedObjectError, check_shared_object

    try:
        check_shared_object(path, fix=f"rebuild it: {BUILD_HINT}")
    except SharedObjectError as err:
        raise KernelLibraryError(
            f"{err.path} is not a loadable shared library: it {err.problem}; {err.fix}"
        ) from err
    except ModuleNotFoundError as err:
        if err.name != "elftools":
            raise
        raise KernelLibraryError(f"cannot load {path}: {err}") from err
    _check_simulator_environment(path)
    try:
        return ctypes.CDLL(str(path))
    except OSError as err:
        raise KernelLibraryError(f"{path} is not a loadable shared library ({err}); {BUILD_HINT}") from err


def _check_simulator_environment(path: Path) -> None:
    # A simulator build's runtime refuses a bad SIMULATOR_THREADS/STACK_KB/DEVICES when loaded (every
    # launcher then fails); refuse it here first, with the same line, as a ValueError.
    from ...build_kernels import KernelBuildError, simulator_package

    try:
        limits = importlib.import_module(simulator_package().__name__ + ".limits")
    except (ImportError, KernelBuildError):
        return  # no simulator in this install: the library's runtime still refuses the value
    if limits.built_by_simulator(path):
        limits.check_environment()


class CudaCKernels:
    """The four fused-op launchers of a loaded pair of kernel libraries, with checked inputs.

    ``libraries`` maps each name in ``LIBRARIES`` to a loaded library (a ``ctypes.CDLL``, or
    any object with the launcher attributes). The signatures are declared once, here.
    """

    def __init__(self, libraries: Mapping[str, Any], origin: str = "<libraries>") -> None:
        self.origin = origin
        self._launchers: dict[str, Callable[..., int]] = {}
        for name, (abi_symbol, launchers) in LIBRARIES.items():
            lib = libraries[name]
            where = f"{name} from {origin}"
            try:
                abi = getattr(lib, abi_symbol)
            except AttributeError:
                raise KernelLibraryError(
                    f"{where} does not export {abi_symbol}: it is not a torchlight kernel library; "
                    f"{BUILD_HINT}"
                ) from None
            abi.argtypes = ()
            abi.restype = ctypes.c_int
            version = abi()
            if version != ABI_VERSION:
                raise KernelLibraryError(
                    f"{where} has kernel ABI version {version}, expected {ABI_VERSION}: rebuild it from "
                    f"this checkout's sources; {BUILD_HINT}"
                )
            for symbol, argtypes in launchers.items():
                try:
                    fn = getattr(lib, symbol)
                except AttributeError:
                    raise KernelLibraryError(
                        f"{where} does not export the launcher {symbol}; {BUILD_HINT}"
                    ) from None
                fn.argtypes = argtypes
                fn.restype = ctypes.c_int
                self._launchers[symbol] = fn

    @classmethod
    def load(cls, directory: str | os.PathLike) -> CudaCKernels:
        """Load both libraries from ``directory`` (KernelLibraryError when one is missing or invalid)."""
        paths = library_paths(directory)
        for path in paths.values():
            if not path.is_file():
                raise KernelLibraryError(f"kernel library {path} does not exist; {BUILD_HINT}")
        return cls({name: _open_library(path) for name, path in paths.items()}, origin=str(directory))

    def launcher(self, symbol: str) -> Callable[..., int]:
        """The declared ctypes function of one launcher, for calls that bypass the Python checks."""
        return self._launchers[symbol]

    def _call(self, symbol: str, *args: Any) -> None:
        code = self._launchers[symbol](*args)
        if code != 0:
            raise CudaCKernelError(symbol, int(code))

    # --- the fused ops --------------------------------------------------------------------

    def attn_softmax_fw(
        self, x: TensorData, mask: TensorData | None = None, causal: bool = False
    ) -> TensorData:
        """Softmax over the last dim of ``[batch, heads, q_len, k_len]`` float32 scores."""
        x, mask = attn_softmax_inputs(x, mask)
        xs = _host_float32("attn_softmax_fw", "x", x)
        ms, strides = None, (0, 0, 0, 0)
        if mask is not None:  # promoted to x's dtype, float32, by attn_softmax_inputs
            # The mask's own elements and the strides that broadcast them: never the full size.
            ms, strides = compact_mask(mask)
        y = np.empty(x.shape, dtype=FLOAT32)
        batch, heads, q_len, k_len = x.shape
        self._call(
            "tl_attn_softmax_fw_strided",
            _ptr(xs),
            None if ms is None else _ptr(ms),
            _ptr(y),
            batch,
            heads,
            q_len,
            k_len,
            *strides,
            1 if causal else 0,
        )
        return TensorData.from_array(y)

    def attn_softmax_bw(self, y: TensorData, dy: TensorData) -> TensorData:
        """``dx = y * (dy - sum(dy * y))`` over the last dim, float32."""
        check_same_shape("attn_softmax_bw", y, dy)
        if y.ndim < 1:
            raise ValueError("attn_softmax_bw needs at least one dimension (the key dim), got a 0-d tensor")
        ys = _host_float32("attn_softmax_bw", "y", y)
        dys = _host_float32("attn_softmax_bw", "dy", dy)
        dx = np.empty(y.shape, dtype=FLOAT32)
        k_len = y.shape[-1]
        rows = ys.size // k_len if k_len else 0
        self._call("tl_attn_softmax_bw", _ptr(ys), _ptr(dys), _ptr(dx), rows, k_len)
        return TensorData.from_array(dx)

    def layernorm_fw(
        self, x: TensorData, gamma: TensorData, beta: TensorData, eps: float = 1e-5
    ) -> tuple[TensorData, TensorData, TensorData]:
        """Layer norm over the last dim: ``(y, mean, rstd)``, mean/rstd shaped ``x.shape[:-1]``."""
        check_layernorm(x, gamma, beta, eps)
        eps32 = np.float32(eps)
        if not (np.isfinite(eps32) and eps32 > 0):
            raise ValueError(
                f"layer_norm eps {eps!r} is {eps32} in float32, the kernels' precision: use an eps "
                f"between {np.finfo(np.float32).tiny} and {np.finfo(np.float32).max}"
            )
        xs = _host_float32("layernorm_fw", "x", x)
        gs = _host_float32("layernorm_fw", "gamma", gamma)
        bs = _host_float32("layernorm_fw", "beta", beta)
        hidden = x.shape[-1]
        rows = xs.size // hidden
        y = np.empty(x.shape, dtype=FLOAT32)
        mean = np.empty(x.shape[:-1], dtype=FLOAT32)
        rstd = np.empty(x.shape[:-1], dtype=FLOAT32)
        self._call(
            "tl_layernorm_fw",
            _ptr(xs),
            _ptr(gs),
            _ptr(bs),
            _ptr(y),
            _ptr(mean),
            _ptr(rstd),
            rows,
            hidden,
            float(eps32),
        )
        return TensorData.from_array(y), TensorData.from_array(mean), TensorData.from_array(rstd)

    def layernorm_bw(
        self, dy: TensorData, x: TensorData, gamma: TensorData, mean: TensorData, rstd: TensorData
    ) -> tuple[TensorData, TensorData, TensorData]:
        """Layer norm backward: ``(dx, dgamma, dbeta)``."""
        check_layernorm_bw(dy, x, gamma, mean, rstd)
        hidden = x.shape[-1]
        dys = _host_float32("layernorm_bw", "dy", dy)
        xs = _host_float32("layernorm_bw", "x", x)
        gs = _host_float32("layernorm_bw", "gamma", gamma)
        ms = _host_float32("layernorm_bw", "mean", mean)
        rs = _host_float32("layernorm_bw", "rstd", rstd)
        rows = xs.size // hidden
        dx = np.empty(x.shape, dtype=FLOAT32)
        dgamma = np.empty((hidden,), dtype=FLOAT32)
        dbeta = np.empty((hidden,), dtype=FLOAT32)
        self._call(
            "tl_layernorm_bw",
            _ptr(dys),
            _ptr(xs),
            _ptr(gs),
            _ptr(ms),
            _ptr(rs),
            _ptr(dx),
            _ptr(dgamma),
            _ptr(dbeta),
            rows,
            hidden,
        )
        return TensorData.from_array(dx), TensorData.from_array(dgamma), TensorData.from_array(dbeta)


def _host_float32(op: str, name: str, data: TensorData) -> np.ndarray:
    """``data`` as a C-contiguous float32 array the launcher may read (a copy when strided)."""
    if data.dtype != FLOAT32:
        raise TypeError(
            f"{op}: {name} has dtype {data.dtype}; the CUDA C kernels take float32 only "
            f"(CudaCKernelProvider sends other dtypes to the numba-cuda kernels)"
        )
    array = np.asarray(data.array, order="C")
    if array.dtype != FLOAT32 or not array.flags.c_contiguous or array.shape != data.shape:
        raise ValueError(f"{op}: {name} could not be made a contiguous float32 array of shape {data.shape}")
    return array


def _ptr(array: np.ndarray) -> int | None:
    """The host address of a contiguous array (None, i.e. NULL, for an empty one)."""
    return array.ctypes.data if array.size else None


_LOADED: dict[Path, CudaCKernels] = {}


def load_kernels(directory: str | os.PathLike) -> CudaCKernels:
    """The loaded kernel libraries of ``directory``, loaded once per process."""
    key = Path(directory).resolve()
    kernels = _LOADED.get(key)
    if kernels is None:
        kernels = _LOADED[key] = CudaCKernels.load(key)
    return kernels


def all_float32(*operands: TensorData | None) -> bool:
    """Whether every given operand (None is skipped) is float32, the CUDA C kernels' dtype."""
    return all(op is None or op.dtype == FLOAT32 for op in operands)
