"""Package namespaces whose names are imported on first use (PEP 562): ``import dpledger`` and a
command that needs none of them (``dpledger --help``) load no numerics (dp-accounting alone takes
over a second to import)."""

from __future__ import annotations

import importlib


def exports(package: str, homes: dict[str, tuple[str, ...]]):
    """``(__getattr__, __dir__, __all__)`` for ``package``: each name of ``homes[module]`` comes from
    ``package.module``; any other attribute is a submodule, imported when first asked for."""
    home_of = {name: module for module, names in homes.items() for name in names}
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str):
        module = home_of.get(name)
        if module is not None:
            value = getattr(importlib.import_module(f"{package}.{module}"), name)
            namespace[name] = value
            return value
        try:
            return importlib.import_module(f"{package}.{name}")
        except ModuleNotFoundError as missing:
            if missing.name != f"{package}.{name}":
                raise
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(home_of))

    return __getattr__, __dir__, sorted(home_of)
