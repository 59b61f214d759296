"""Hypothesis runs that depend on their seed alone.

Hypothesis (6.131 and later) mixes into its draws, with a small probability, constants it
collects from the source of whichever *local* modules happen to be imported (not site-packages,
not test files). A seeded search would then find different pairs in different programs. Inside
``seed_only()`` that pool is empty: draws depend on the seed, the strategy and the test alone.
The pool is a private part of Hypothesis; if it is absent (older or newer versions), there is
nothing to remove and ``seed_only`` does nothing, which tests/test_testing.py checks by running
the same search from two programs.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

_lock = threading.Lock()


@contextlib.contextmanager
def seed_only() -> Iterator[None]:
    """Hypothesis's local-module constants switched off for the duration (thread-safe)."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - a Hypothesis without the pool
        yield
        return
    getter, cache = getattr(providers, "_get_local_constants", None), getattr(providers, "CONSTANTS_CACHE", None)
    if getter is None or cache is None:  # pragma: no cover
        yield
        return
    empty = Constants()
    with _lock:
        cache.cache.clear()  # it caches the local constants allowed for each kind of draw (as Hypothesis does)
        providers._get_local_constants = lambda: empty
        try:
            yield
        finally:
            providers._get_local_constants = getter
            cache.cache.clear()
