"""Helpers shared by the benchmark scripts: where results go and how they are written."""

from __future__ import annotations

import json
import pathlib
import platform

import numpy as np

RESULTS = pathlib.Path(__file__).resolve().parent / "results"


def machine() -> dict:
    import os

    return {"python": platform.python_version(), "cpus": os.cpu_count(), "numpy": np.__version__}


def write(name: str, data: dict, markdown: str) -> None:
    """Write ``results/NAME.json`` (numbers) and ``results/NAME.md`` (the table the README shows)."""
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps({"machine": machine(), **data}, indent=2, default=float))
    (RESULTS / f"{name}.md").write_text(markdown.rstrip() + "\n")


def quick_run(description: str) -> bool:
    """Parse the scripts' one common flag: ``--quick`` (a smoke run: ``description`` says what shrinks)."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help=description)
    return parser.parse_args().quick


def options(name: str, description: str) -> tuple[bool, dict | None]:
    """Parse ``--quick`` (a smoke run: ``description`` says what shrinks) and ``--render`` (only
    redraw results/NAME.md and .png): (quick, the saved results without their machine, or None)."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help=description)
    parser.add_argument("--render", action="store_true", help="only redraw the md and png from the existing json")
    arguments = parser.parse_args()
    if not arguments.render:
        return arguments.quick, None
    saved = json.loads((RESULTS / f"{name}.json").read_text())
    saved.pop("machine")
    return arguments.quick, saved


def publish(name: str, data: dict, markdown: str, draw=None) -> None:
    """Write the results, draw ``results/NAME.png`` with ``draw(path)`` when given, print the table."""
    write(name, data, markdown)
    if draw is not None:
        draw(RESULTS / f"{name}.png")
    print(markdown)
