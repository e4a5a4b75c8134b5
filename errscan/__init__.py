"""errscan: every raise and assert of a Git repository at a pinned commit, as records.

result = errscan.extract("owner/name@v1.2.0")
for record in result.records:
    print(record.id, record.exception, record.message, record.url)

The names are those of `errscan.api`, loaded on first use, so that importing errscan
(and `errscan --version`) costs nothing until a scan is asked for.
"""

from __future__ import annotations

__version__ = "0.1.0"

TYPE_CHECKING = False  # not typing's: a replayed rescan (errscan.launch) never loads typing
if TYPE_CHECKING:
    from typing import Any

    from errscan.api import (
        CacheError,
        ErrorRecord,
        ErrscanError,
        FileError,
        InputError,
        Match,
        Scan,
        ScanOptions,
        ScanResult,
        StoreError,
        TemplateIndex,
        build_site,
        cache_info,
        default_cache_dir,
        diff,
        enrich,
        enrichment_of,
        export,
        extract,
        extract_source,
        find_record,
        load_records,
        lookup,
        lookup_index,
        page,
        prune_cache,
        record_schema,
        records_of,
        scan,
        scan_options,
        store_scan,
        stored_records,
        stored_result,
    )

__all__ = [
    "CacheError",
    "ErrorRecord",
    "ErrscanError",
    "FileError",
    "InputError",
    "Match",
    "Scan",
    "ScanOptions",
    "ScanResult",
    "StoreError",
    "TemplateIndex",
    "__version__",
    "build_site",
    "cache_info",
    "default_cache_dir",
    "diff",
    "enrich",
    "enrichment_of",
    "export",
    "extract",
    "extract_source",
    "find_record",
    "load_records",
    "lookup",
    "lookup_index",
    "page",
    "prune_cache",
    "record_schema",
    "records_of",
    "scan",
    "scan_options",
    "store_scan",
    "stored_records",
    "stored_result",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'errscan' has no attribute {name!r}")
    from errscan import api

    value = getattr(api, name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
