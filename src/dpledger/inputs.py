"""Input files for ``dpledger run``: what a file holds, judged by its content and checked against
its extension, and whether the chosen estimator takes it.

Graph estimators (relation ``EdgeAdjacency``) take GraphML, an edge list (text lines of integer
vertex pairs ``i j`` or ``i,j``, optionally under a header line; needs the public ``n``) or a .npy
adjacency matrix. Dataset estimators take numbers as CSV or whitespace-separated text (one point
per row, optionally under a header line) or a .npy array. ``#`` starts a comment in text files.

A dataset for a block ledger (``load_blocks``, ``dpledger run --blocks``) is CSV or text whose
header line names the column holding each record's public block; only the named blocks' rows are
read as numbers.

Anything else is refused with an ``InputError``: a ``ValueError`` (the command line's exit code 2)
whose one line names the file, what was detected and what the estimator takes. Loading happens
before the ledger is opened, so a refused file is never charged. No Python warning escapes: numpy's
(e.g. loadtxt's "input contained no data") become errors here.
"""

from __future__ import annotations

import codecs
import pathlib
import warnings

import numpy as np

GRAPH_FORMATS = ("a graph: an edge list (lines of integer vertex pairs 'i j' or 'i,j'; needs n=...), "
                 "GraphML or a .npy adjacency matrix")
DATASET_FORMATS = ("a dataset: CSV or whitespace-separated numbers (one point per row, an optional header "
                   "line) or a .npy array")

#: Leading bytes of binary formats someone might pass by mistake, and what to call them.
_MAGIC = ((b"\x93NUMPY", "npy"), (b"PK\x03\x04", "zip"), (b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"),
          (b"\xfd7zXZ\x00", "xz"), (b"SQLite format 3\x00", "sqlite"), (b"\x89HDF\r\n\x1a\n", "hdf5"),
          (b"PAR1", "parquet"), (b"%PDF", "pdf"))

_DESCRIPTIONS = {
    "graphml": "GraphML", "xml": "XML that is not GraphML", "html": "HTML", "json": "JSON",
    "npy": "a NumPy .npy array", "zip": "a zip archive (e.g. .npz, .xlsx)", "gzip": "gzip-compressed data",
    "bzip2": "bzip2-compressed data", "xz": "xz-compressed data", "sqlite": "an SQLite database (a ledger file?)",
    "hdf5": "an HDF5 file", "parquet": "a Parquet file", "pdf": "a PDF document",
    "binary": "binary data (not UTF-8 text)", "text": "text (CSV or whitespace-separated)",
}

#: What an extension says the file is (the kinds of content it may hold, and its name); content of
#: another kind is refused as a mismatch. Other extensions (or none) leave it to the content.
_TEXT = ({"text"}, "CSV or text")
_EXTENSIONS = {
    ".graphml": ({"graphml"}, "GraphML"), ".xml": ({"graphml", "xml"}, "XML"), ".json": ({"json"}, "JSON"),
    ".jsonl": ({"json"}, "JSON"), ".npy": ({"npy"}, "a NumPy .npy array"), ".npz": ({"zip"}, "a NumPy .npz archive"),
    ".zip": ({"zip"}, "a zip archive"), ".gz": ({"gzip"}, "gzip-compressed data"),
    ".bz2": ({"bzip2"}, "bzip2-compressed data"), ".xz": ({"xz"}, "xz-compressed data"),
    ".sqlite": ({"sqlite"}, "an SQLite database"), ".db": ({"sqlite"}, "an SQLite database"),
    ".h5": ({"hdf5"}, "an HDF5 file"), ".hdf5": ({"hdf5"}, "an HDF5 file"), ".parquet": ({"parquet"}, "a Parquet file"),
    ".html": ({"html"}, "HTML"), ".htm": ({"html"}, "HTML"), ".pdf": ({"pdf"}, "a PDF document"),
    **{ext: _TEXT for ext in (".csv", ".tsv", ".txt", ".dat", ".edges", ".edgelist", ".el")},
}

_SNIFF = 8192  # bytes read to tell formats apart


class InputError(ValueError):
    """A file the estimator does not take, or cannot be read; one line, naming the file."""


def load(path: pathlib.Path, graph, params: dict):
    """The input of ``graph`` (a registered estimator's graph) from the file ``path``: a networkx
    graph, an adjacency matrix or a data array, checked by ``graph.validate``. Raises ``InputError``
    before anything is charged (``dpledger run`` loads before it opens the ledger)."""
    from .relations import EdgeAdjacency

    path = pathlib.Path(path)
    wants_graph = isinstance(graph.relation, EdgeAdjacency)
    name = getattr(graph, "name", None) or "this estimator"
    takes = f"{name} takes {GRAPH_FORMATS if wants_graph else DATASET_FORMATS}"

    def refuse(what: str) -> InputError:
        return InputError(f"{path}: {what}; {takes}")

    kind = _sniff(path, refuse)
    suffix = path.suffix.lower()
    kinds, claimed = _EXTENSIONS.get(suffix, (None, None))
    if kinds is not None and kind not in kinds:
        raise refuse(f"the content is {_describe(kind)}, but the extension {suffix} says {claimed}")
    if kind == "npy":
        data = _load_npy(path, refuse)
    elif kind == "graphml" and wants_graph:
        data = _load_graphml(path, refuse)
    elif kind == "text":
        data = _load_text(path, wants_graph, params, refuse)
    else:
        raise refuse(f"detected {_describe(kind)}")
    return _validated(path, graph, data)


def _validated(path: pathlib.Path, graph, data):
    validate = getattr(graph, "validate", None)
    if validate is not None:  # Accountant.run validates again; refusing here names the file
        try:
            validate(data)
        except ValueError as error:
            raise InputError(f"{path}: {_reason(error)}") from None
    return data


def load_blocks(path: pathlib.Path, graph, column: str, blocks) -> tuple[np.ndarray, list[str]]:
    """The records of ``blocks`` in a CSV or text dataset whose header line names ``column``, the
    column holding each record's public block, and their blocks (for ``Accountant.run(...,
    block_of=)``): the other columns are the records. Rows of other blocks are read only for their
    block, never as numbers, so no value of theirs is checked or reported."""
    from .relations import EdgeAdjacency

    path = pathlib.Path(path)

    def refuse(what: str) -> InputError:
        return InputError(f"{path}: {what}; --block-column takes CSV or whitespace-separated numbers under a header "
                          f"line that names the column {column!r}")

    kind = _sniff(path, refuse)
    if isinstance(graph.relation, EdgeAdjacency) or kind != "text":
        raise refuse("the estimator takes a graph, which has no records to split into blocks"
                     if kind == "text" else f"detected {_describe(kind)}")
    lines = _lines(path)
    _, head = next(lines, (None, ""))
    delimiter = "," if "," in head else None
    header = _fields(head, delimiter)
    if column not in header:
        raise refuse(f"the header line {_excerpt(head)} has no column {column!r}")
    at, wanted, rows, keys = header.index(column), set(blocks), [], []
    for number, line in lines:
        fields = _fields(line, delimiter)
        if len(fields) <= at:
            raise refuse(f"line {number} has no {column!r} field")
        if fields[at] in wanted:
            values = fields[:at] + fields[at + 1:]
            if len(values) != len(header) - 1 or not all(_number(value, False) for value in values):
                width = f"{len(header) - 1} number{'s' if len(header) > 2 else ''}"
                raise refuse(f"line {number} (block {fields[at]!r}) is not {width} beside its block: {_excerpt(line)}")
            rows.append([float(value) for value in values])
            keys.append(fields[at])
    return _validated(path, graph, np.array(rows, dtype=float).reshape(len(rows), len(header) - 1)), keys


def _describe(kind: str) -> str:
    return _DESCRIPTIONS[kind]


def _reason(error: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(error).split()) or type(error).__name__


def _sniff(path: pathlib.Path, refuse) -> str:
    """The kind of content: a key of ``_DESCRIPTIONS``. Refuses missing, unreadable and empty files."""
    if not path.exists():
        raise refuse("no such file")
    if path.is_dir():
        raise refuse("is a directory, not a file")
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
            whole = len(head) < _SNIFF or not handle.read(1)
    except OSError as error:
        raise refuse(f"cannot be read ({error.strerror or _reason(error)})") from None
    if not head:
        raise refuse("the file is empty")
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=whole)
    except UnicodeDecodeError:
        return "binary"
    if "\x00" in text:
        return "binary"
    start = text.lstrip()
    if not start:
        if whole:
            raise refuse("the file is empty (only blank lines)")
        return "text"
    if start[0] == "<":
        lowered = start.lower()
        if "<graphml" in lowered:
            return "graphml"
        return "html" if lowered.startswith(("<!doctype html", "<html")) else "xml"
    if start[0] in "{[":
        return "json"
    return "text"


def _load_npy(path: pathlib.Path, refuse):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return np.load(path, allow_pickle=False)
    except ValueError as error:
        if "allow_pickle" in str(error):
            raise refuse("detected a NumPy .npy array of Python objects, which would need unpickling "
                         "(refused)") from None
        raise refuse(f"detected a NumPy .npy array but it cannot be read ({_reason(error)})") from None
    except (OSError, EOFError, Warning) as error:
        raise refuse(f"detected a NumPy .npy array but it cannot be read ({_reason(error)})") from None


def _load_graphml(path: pathlib.Path, refuse):
    try:
        import networkx
    except ImportError:
        raise refuse("detected GraphML, but reading it needs networkx, which is not installed "
                     "(pip install networkx)") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return networkx.read_graphml(path)
    except (SyntaxError, networkx.NetworkXError, ValueError, TypeError, KeyError, Warning) as error:
        # xml.etree's ParseError is a SyntaxError
        raise refuse(f"detected GraphML but it cannot be parsed ({_reason(error)})") from None


def _fields(line: str, delimiter: str | None) -> list[str]:
    return [field.strip() for field in line.split(delimiter)]


def _number(field: str, integer: bool) -> bool:
    try:
        (int if integer else float)(field)
        return True
    except ValueError:
        return False


def _excerpt(line: str) -> str:
    line = line.strip()
    return repr(line if len(line) <= 60 else line[:57] + "...")


def _lines(path: pathlib.Path):
    """(line number from 1, the line without its comment) for each line with content."""
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            line = line.split("#", 1)[0]
            if line.strip():
                yield number, line


def _load_text(path: pathlib.Path, wants_graph: bool, params: dict, refuse):
    """CSV (commas) or whitespace-separated numbers: an edge list for graphs, points for datasets.
    A first line none of whose fields is a number (e.g. "x,y") is a header; "nan" is a number."""
    header = first = None
    for number, line in _lines(path):
        delimiter = "," if "," in line else None
        if header is None and first is None and not any(_number(f, False) for f in _fields(line, delimiter)):
            header = number
            continue
        first = (number, line)
        break
    if first is None:
        raise refuse("no data rows (only a header line)" if header is not None else "no data rows (only comments)")
    delimiter = "," if "," in first[1] else None
    shape = "CSV" if delimiter else "whitespace-separated text"
    dtype = np.int64 if wants_graph else np.float64
    if wants_graph and "n" not in params:
        raise refuse(f"detected {shape} (an edge list?), which needs the estimator's public parameter n (n=...)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            table = np.loadtxt(path, dtype=dtype, delimiter=delimiter, ndmin=2, skiprows=header or 0,
                               comments="#", encoding="utf-8-sig")
    except (ValueError, Warning) as error:
        raise refuse(_diagnose(path, header, delimiter, shape, wants_graph, error)) from None
    if not wants_graph:
        return table
    if table.shape[1] != 2:
        raise refuse(f"detected {shape} of integers in {table.shape[1]} columns, not vertex pairs "
                     f"(line {first[0]}: {_excerpt(first[1])})")
    from .algorithms.sbm import from_edge_list

    try:
        return from_edge_list(table, params["n"], sparse=True)
    except ValueError as error:
        raise InputError(f"{path}: {_reason(error)}") from None


def _diagnose(path, header, delimiter, shape, wants_graph, error) -> str:
    """Why numpy could not read the table: the first line at fault, in words."""
    width = None
    for number, line in _lines(path):
        if number == header:
            continue
        fields = _fields(line, delimiter)
        if width is None:
            width = (number, len(fields))
        elif len(fields) != width[1]:
            count = f"{len(fields)} field" + ("" if len(fields) == 1 else "s")
            return f"line {number} has {count}, line {width[0]} has {width[1]}: {_excerpt(line)} (detected {shape})"
        if not all(_number(f, False) for f in fields):
            return f"line {number} is not numbers: {_excerpt(line)} (detected {shape})"
        if wants_graph and not all(_number(f, True) for f in fields):
            return (f"detected {shape} of numbers that are not integer vertex pairs "
                    f"(line {number}: {_excerpt(line)})")
    return f"detected {shape} that cannot be read as a table of numbers ({_reason(error)})"
