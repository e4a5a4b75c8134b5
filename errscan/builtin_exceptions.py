"""The interpreter's built-in exception classes, by name: shared by the analyzer, the
lookup and the site without the one importing the other."""

from __future__ import annotations

import builtins

BUILTIN_EXCEPTIONS: dict[str, type[BaseException]] = {
    name: value
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
