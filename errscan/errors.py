"""The one exception errscan raises for bad input; everything else is a bug (exit 1)."""

from __future__ import annotations


class InputError(Exception):
    """Bad input from the user: a path, a revision, a URL, an option. The CLI exits 2."""
