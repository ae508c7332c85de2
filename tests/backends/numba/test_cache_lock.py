"""Two processes saving kernels to one numba cache index at once keep each kernel's own file."""

from __future__ import annotations

import threading
import time

import pytest

numba_caching = pytest.importorskip("numba.core.caching", reason="the numba twin needs numba")

from torchlight.backends.numba_twin import cache_lock  # noqa: E402


class _Holder:
    """Stands for a dispatcher: numba's cache object with its index file."""

    def __init__(self, cache_file):
        self._cache = type("Cache", (), {})()
        self._cache._cache_file = cache_file


def _slow_index_file(tmp_path):
    """A numba index file whose index read waits, so that two unlocked saves read the same index."""
    cache_file = numba_caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    load = cache_file._load_index

    def slow_load():
        index = load()
        time.sleep(0.3)  # both saves hold the same (empty) index by now, unless one waits
        return index

    cache_file._load_index = slow_load
    return cache_file


def _save_both(cache_files):
    saves = zip(cache_files, ("a", "b"))
    threads = [threading.Thread(target=f.save, args=(key, f"machine code of {key}")) for f, key in saves]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def test_concurrent_saves_with_the_lock_keep_each_kernel_under_its_own_key(tmp_path):
    files = [_slow_index_file(tmp_path) for _ in range(2)]
    for f in files:
        cache_lock.serialize_cache_writes(_Holder(f))
    _save_both(files)
    reader = numba_caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    assert reader.load("a") == "machine code of a"
    assert reader.load("b") == "machine code of b"


def test_without_the_lock_the_same_race_mixes_the_kernels_up(tmp_path):
    # The race the lock exists for: shown here so that the test above cannot pass by luck.
    files = [_slow_index_file(tmp_path) for _ in range(2)]
    _save_both(files)
    reader = numba_caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))
    loaded = {key: reader.load(key) for key in ("a", "b")}
    assert loaded != {"a": "machine code of a", "b": "machine code of b"}


def test_a_numba_without_the_expected_cache_layout_is_refused_by_name():
    with pytest.raises(RuntimeError, match="install the numba release"):
        cache_lock.serialize_cache_writes(object())
