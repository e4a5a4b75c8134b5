"""Scanning one file: what a worker is left holding afterwards."""

from __future__ import annotations

import gc
from pathlib import Path

import errscan
from errscan.analyzer import cache, scan


def test_scanning_leaves_no_reference_cycles() -> None:
    """A worker collects garbage seldom (scan._worker_init): a cycle left per site would
    pile up over a large repository. errscan's own sources raise in most forms."""
    sources = sorted(Path(errscan.__file__).parent.rglob("*.py"))
    gc.collect()
    gc.disable()
    try:
        sites = 0
        for path in sources:
            result = scan.scan_file(str(path), path.read_bytes(), 3)
            sites += len(result.sites)
            cache.encode(result)
        del result
        left = gc.collect()
    finally:
        gc.enable()
    assert sites > 50
    assert left == 0
