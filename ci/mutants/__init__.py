"""Mutation testing of the GPU kernels: how many realistic single-bug variants the CPU tiers catch.

``nox -s mutants`` (or ``python -m ci.mutants``) applies GPU-specific mutation operators to the
CUDA C kernels (``torchlight/cuda_kernels/``), the numba-cuda kernels
(``torchlight/backends/numba_cuda/kernels.py``) and the twin's shared bodies
(``torchlight/backends/kernel_bodies.py``), builds each mutant for the CPU and runs the tests that
can catch it, cheapest first, until one fails. It writes ``reports/mutants.md`` and
``reports/mutants.json``.

Modules, one job each:

* ``model``: a mutant (one change to one file) and how it is applied;
* ``cuda_source`` / ``python_source``: the parsed kernels (libclang in CUDA mode; ``ast``);
* ``cuda_operators`` / ``python_operators``: the operators, each finding its sites in a parsed file;
* ``registry``: every operator by name, and the files each one mutates;
* ``equivalent``: mutants that cannot change any result, each with the reason;
* ``stages``: which tests run for a mutant of each file, in what order, with what environment;
* ``runner``: workspaces, the parallel run and the outcome of each mutant;
* ``journal``: the finished mutants recorded as they come, so an interrupted session resumes;
* ``report``: the Markdown and JSON report.
"""
