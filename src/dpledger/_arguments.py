"""Argument types for the command line: argparse turns their errors into a usage error (exit 2)."""

from __future__ import annotations

import argparse
import math


def integer(minimum: int):
    """An argparse type: an integer >= ``minimum``."""
    def parse(text: str) -> int:
        value = int(text)
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {value}")
        return value

    parse.__name__ = "integer"  # argparse names the type in "invalid integer value: ..."
    return parse


def probability(text: str) -> float:
    """An argparse type: a number in (0, 1)."""
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {value}")
    return value


def epsilons(text: str) -> list[float]:
    """An argparse type: a comma-separated list of finite ε > 0, e.g. "0.5,1,2,4"."""
    try:
        values = [float(item) for item in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be comma-separated numbers such as 0.5,1,2,4, got {text!r}") from None
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise argparse.ArgumentTypeError(f"every ε must be a finite number > 0, got {text!r}")
    return values


def _value(text: str):
    """Parse a ``key=value`` value: int, float, none/true/false, else the string."""
    lowered = text.lower()
    if lowered in ("none", "null"):
        return None
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def estimator_params(args) -> dict:
    """The estimator's public parameters: key=value pairs, then --epsilon and --delta."""
    params = {}
    for pair in args.params:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ValueError(f"estimator parameters are key=value pairs, got {pair!r}")
        params[key] = _value(value)
    for key in ("epsilon", "delta"):
        if getattr(args, key, None) is not None:
            params[key] = getattr(args, key)
    return params
