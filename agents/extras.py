"""Optional dependencies: an import that fails says, in one line, which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(ImportError):
    """A package an optional feature needs is not installed; the message names the extra."""


def import_extra(module: str, extra: str, feature: str) -> ModuleType:
    """``import module``, or ``MissingExtra``: "``feature`` needs ``module``: pip install
    'hear-gym[extra]'" with the import's own reason."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(
            f"{feature} needs {module.split('.')[0]}: pip install 'hear-gym[{extra}]' ({exc})"
        ) from None
