"""Check that a graph's per-record maps are position-free on given data (docs/design.md,
"Per-record maps"): the same bits for the same record at any row, any n, any BLAS thread count.

``check(graph, data)`` runs the graph once (no charge) and, for every ``per_record`` map the run
makes, puts records of its input — a few of the data's own and in-domain extremes (0, a subnormal,
±1.7e308, 1e17, mixed signs) — at every row of inputs of each size in ``sizes`` (every row holding
the record, and the record among other records at the first, middle and last rows), with each
BLAS thread count in ``threads``, and compares each mapped row bit for bit with the record mapped
alone. A difference raises ``PositionDependent`` naming the step, the record, n, the row and the
thread count.
"""

from __future__ import annotations

import numpy as np

from .. import _blas
from ..graph.runtime import ERROR_STATE, Halt, RunState

#: Values every record coordinate may take in a finite-double domain, at their extremes.
EXTREMES = (0.0, 5e-324, -2.2e-308, 1.7e308, -1.7e308, 1e17, -3.25)


class PositionDependent(AssertionError):
    """A per-record map gave a record other bits at another row, size or thread count."""


class _Recording(RunState):
    def __init__(self, rng):
        super().__init__(rng)
        self.maps: list[tuple[str, object, np.ndarray, dict]] = []

    def map_records(self, path, fn, records, inputs):
        self.maps.append((path, fn, np.asarray(records), dict(inputs)))
        return super().map_records(path, fn, records, inputs)


def _candidates(records: np.ndarray, domain) -> list[np.ndarray]:
    """A few of the records themselves and, for a map of the graph's own records (``domain`` not
    None), extreme records of the domain: ``EXTREMES`` in every coordinate, and mixed, projected
    into the domain's bounds."""
    picks = [records[i] for i in sorted({0, len(records) // 2, len(records) - 1})] if len(records) else []
    if domain is None:
        return picks
    shape = records.shape[1:]
    mixed = np.random.default_rng(0).choice(np.array(EXTREMES), size=(1, *shape))
    extremes = np.concatenate([np.full((len(EXTREMES), *shape), np.reshape(EXTREMES, (-1,) + (1,) * len(shape))),
                               mixed])
    return picks + list(domain.project(extremes))


def _bits(value) -> bytes:
    return np.ascontiguousarray(value).tobytes()


def check(graph, data, rng: np.random.Generator | None = None, sizes=(7, 8, 1001), threads=(1, 2),
          records=None) -> int:
    """Run ``graph`` on ``data`` and check every per-record map it makes (module doc); returns how
    many mapped rows were compared. ``records`` (an array of records) replaces the candidates."""
    state = _Recording(np.random.default_rng(0) if rng is None else rng)
    data = graph.validate(data)
    try:
        graph.root.execute(data, state, graph.root.name)
    except Halt:
        pass
    compared = 0
    for path, fn, seen, inputs in state.maps:
        own = seen.shape == np.shape(data) and np.array_equal(seen, data)  # a map of the graph's records
        candidates = _candidates(seen, graph.domain if own else None) if records is None else list(np.asarray(records))
        others = seen if len(seen) else np.asarray(candidates)
        for record in candidates:
            for count in threads:
                with _blas.limit(count), np.errstate(**ERROR_STATE):  # as the runtime runs the map
                    alone = _bits(np.asarray(fn(record[None], **inputs))[0])
                    for n in sizes:
                        filler = others[np.arange(n) % len(others)].copy()
                        tiled = np.repeat(record[None], n, axis=0)
                        mixed = filler.copy()
                        rows = sorted({0, n // 2, n - 1})
                        mixed[rows] = record
                        for label, batch, where in (("every row", tiled, range(n)), ("among others", mixed, rows)):
                            mapped = np.asarray(fn(batch, **inputs))
                            for row in where:
                                compared += 1
                                if _bits(mapped[row]) != alone:
                                    raise PositionDependent(
                                        f"per-record map {path!r} is not position-free: the record {record!r} "
                                        f"mapped alone differs from the same record at row {row} of {n} "
                                        f"({label}) with {count} BLAS thread(s); build the map from "
                                        "dpledger.rowwise and elementwise numpy (no matrix products)")
    return compared
