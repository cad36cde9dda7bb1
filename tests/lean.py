"""Run a test's heavy loop in a fresh, small interpreter (`run_lean`).

A fork costs in proportion to the forking process's memory: its page tables are copied, and
a collection in the child touches every object it inherited. A pytest worker holds every
vtcode module (tests/forked_cli.preload) and what earlier tests left, 200-350 MB. Splitting a
log forks once per split: 1,536 splits took 27.9 s from a 346 MB process and 8.1 s from a
45 MB one (bench: the sweep of tests/validate/test_validate_split.py in a bare interpreter,
with and without 300 MB of ballast). `run_lean` starts a `spawn` interpreter that imports
only the function's module, runs it there and returns its result; an exception in it is
raised here, and a child that dies, or an exception that cannot cross back, is
`BrokenProcessPool` at once (multiprocessing.Pool waited forever on both).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def run_lean(fn: Callable[P, R], /, *args: P.args, **kwargs: P.kwargs) -> R:
    """`fn(*args, **kwargs)` in a fresh interpreter; `fn` must be a module-level function of a
    module that imports little (the child imports it by name)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(fn, *args, **kwargs).result()
