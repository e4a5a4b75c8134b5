"""Modules loaded on first use, so that a command pays only for the stages it runs (a
replayed rescan loads neither the extractors nor the linking)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule(ModuleType):
    """Stands for the module `name`, imported when an attribute of it is first read.

    Every read goes to the module itself, so that what is set on it later (a test's
    monkeypatch) is what is read.
    """

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lazy_target"] = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__dict__["_lazy_target"]), attr)
