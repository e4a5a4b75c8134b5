"""Modules loaded on first use, so that a command pays only for the stages it runs (a
replayed rescan loads neither the extractors nor the linking)."""

from __future__ import annotations

import importlib
import sys
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
        name = self.__dict__["_lazy_target"]
        # sys.modules first: import_module's own lookup costs some microseconds a read,
        # which a scan makes thousands of; but a module another thread is still loading
        # is there half made, and import_module waits for it
        module = sys.modules.get(name)
        if module is None or getattr(module.__spec__, "_initializing", False):
            module = importlib.import_module(name)
        return getattr(module, attr)
