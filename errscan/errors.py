"""The exceptions errscan raises on purpose; anything else is a bug (the CLI exits 1).

ErrscanError
└── InputError          bad input: a path, a revision, a URL, an option (exit 2)
    ├── StoreError      a store that cannot be used: missing, not errscan's, locked
    └── CacheError      a cache that cannot be used: not writable, locked
"""

from __future__ import annotations


class ErrscanError(Exception):
    """What errscan raises on purpose: catch this for all of them."""


class InputError(ErrscanError):
    """Bad input from the user: a path, a revision, a URL, an option. The CLI exits 2."""


class StoreError(InputError):
    """The store (--db) cannot be used: missing for a command that reads it, another
    program's database, newer than this errscan, locked past the wait."""


class CacheError(InputError):
    """The cache dir cannot be used: not writable, its database locked past the wait."""
