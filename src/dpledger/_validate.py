"""Small argument checks shared by every public constructor.

Each raises ``ValueError``/``TypeError`` naming the argument and the accepted range, so a bad
input is refused before any budget is charged.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def real(name: str, value: object) -> float:
    """Return ``value`` as a finite float or raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def nonnegative(name: str, value: object) -> float:
    value = real(name, value)
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return value


def positive(name: str, value: object) -> float:
    value = real(name, value)
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return value


def probability(name: str, value: object, *, low_open: bool = False, high_open: bool = True) -> float:
    """A number in [0, 1) by default; the bounds' openness is adjustable."""
    value = real(name, value)
    low_ok = value > 0 if low_open else value >= 0
    high_ok = value < 1 if high_open else value <= 1
    if not (low_ok and high_ok):
        lo = "(0" if low_open else "[0"
        hi = "1)" if high_open else "1]"
        raise ValueError(f"{name} must be in {lo}, {hi}, got {value!r}")
    return value


def integer(name: str, value: object, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    value = int(value)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def finite_array(name: str, value: object, *, ndim: int | None = None, min_size: int = 1) -> np.ndarray:
    """A float array with no NaN/inf (and the given number of dimensions)."""
    if np.iscomplexobj(value) or (isinstance(value, (list, tuple)) and any(isinstance(v, complex) for v in value)):
        raise TypeError(f"{name} must be real-valued, got complex numbers")
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric array-like, got {type(value).__name__}: {exc}") from None
    if ndim is not None and array.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimension(s), got shape {array.shape}")
    if array.size < min_size:
        raise ValueError(f"{name} must have at least {min_size} element(s), got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or inf; clean or clip the input first")
    return array
