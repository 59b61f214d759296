"""Where randomness comes from: an explicit numpy Generator, OS-seeded unless the caller passes one.

A seeded generator is for tests and reproducible experiments only; releases on real data should
leave ``rng=None`` so that the seed comes from the operating system (``secrets``).
"""

from __future__ import annotations

import secrets

import numpy as np


def generator(rng: np.random.Generator | None) -> np.random.Generator:
    """``rng`` itself, or a fresh generator seeded with 128 bits from the OS when ``None``."""
    if rng is None:
        return np.random.default_rng(secrets.randbits(128))
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy Generator or None, got {type(rng).__name__}; "
            "pass np.random.default_rng(seed) for reproducible tests"
        )
    return rng
