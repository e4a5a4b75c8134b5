"""SourceFiles -> per-file results: parse each file and pull out its sites."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from errscan.analyzer.files import SourceFile
from errscan.analyzer.parse import parse
from errscan.extractors import sites
from errscan.models import FileError, FileResult


def scan_file(path: str, data: bytes | str, radius: int) -> FileResult:
    """One file's sites, or the error that stopped it; never raises for bad input."""
    parsed = parse(data, path)
    if isinstance(parsed, FileError):
        return FileResult(path, error=parsed)
    try:
        found = sites.extract(parsed.tree, parsed.src, radius)
    except (RecursionError, MemoryError) as exc:
        return FileResult(path, error=FileError(path, f"too deeply nested: {type(exc).__name__}"))
    return FileResult(path, sites=tuple(found))


def scan(files: Iterable[SourceFile], radius: int) -> Iterator[FileResult]:
    for source_file in files:
        yield scan_file(source_file.path, source_file.data, radius)
