"""pytest-xdist: the test modules whose module-scoped fixture is costly run on one worker each.

Under ``-n N`` with xdist's default ``--dist load``, a module's tests are spread over the
workers, and a module-scoped fixture runs once in every worker that gets one of them: the README
check's fresh virtualenv and install, or the pip install of the checkout, twice on two workers.
This plugin hands such a module out whole (xdist's ``loadscope`` scheduler with every other test
its own unit), and hands those modules out first, costliest first (each worker puts them at the
head of its collection, in the order listed), so that the single tests fill the other workers
and none waits alone at the end. ``--dist loadgroup`` would do it with marks,
but the xdist release the tiers install cannot rename the test ids it groups by under pytest 9.

Only runs with ``--dist load`` (the default with ``-n``) take this schedule; others keep theirs.
"""

from __future__ import annotations

import pytest

# Test module (path from the repository root) -> its costly module-scoped fixture; costliest
# module first (measured with --durations in the cpu and cudasim tiers).
ONE_WORKER_MODULES: dict[str, str] = {
    "tests/harness/test_readme_blocks.py": "sandbox: a fresh virtualenv with the README's install",
    "tests/library/test_build_kernels.py": "installed: a fresh virtualenv with the checkout pip-installed",
    "tests/backends/numba/test_numba_twin.py": "bodies: every kernel body compiled by numba",
    "tests/backends/cuda_c/test_cuda_c_library.py": "two_block_grid: the kernels built by the simulator",
    "tests/harness/test_mutants.py": "cuda_source: a CUDA snippet compiled and parsed by libclang",
    "tests/library/test_shared_object.py": "library: a shared library compiled with cc",
    "tests/library/test_checkpoint_bounds.py": "bomb: a 2 MB archive that inflates to 2 GiB",
    "tests/backends/cuda_c/test_kernel_library_elf_check.py": "library: a shared library compiled with cc",
}


def work_unit(nodeid: str) -> str:
    """What xdist hands out with the test ``nodeid``: its module if listed above, else the test."""
    module = nodeid.split("::", 1)[0]
    return module if module in ONE_WORKER_MODULES else nodeid


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker, the listed modules first, in the order listed; the rest keep their order."""
    if not hasattr(config, "workerinput"):
        return
    rank = {module: n for n, module in enumerate(ONE_WORKER_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


# tryfirst: xdist's own implementation answers with its scheduler otherwise.
@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """xdist's loadscope scheduler over ``work_unit``, for runs with ``--dist load``."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    # The workers' collection order (the listed modules first), not xdist's most-tests-first.
    config.option.loadscopereorder = False

    class ModuleFixtureScheduling(LoadScopeScheduling):
        """Whole modules for ONE_WORKER_MODULES, single tests otherwise."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return ModuleFixtureScheduling(config, log)
