"""BLAS thread limits through one threadpoolctl controller per process.

Building a ``ThreadpoolController`` scans the loaded libraries (about 2 ms, reading
/proc/self/maps); a solver that limited its threads on every run paid that each time, which was
half the cost of a small SBM run. The libraries are loaded by the time the first limit is asked
for (numpy and scipy are imported), so one controller serves every later call.
"""

from __future__ import annotations

import functools

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()


def limit(threads: int):
    """A context manager that limits the BLAS libraries to ``threads`` threads."""
    return _controller().limit(limits=threads, user_api="blas")
