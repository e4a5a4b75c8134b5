"""Records -> SARIF 2.1.0, the format code-scanning tools read.

One result per record: ruleId from the exception, the message template as text, the
location with start and end line, and the record id in partialFingerprints so a tool
tracks the same error across commits; the scanned commit in versionControlProvenance.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import quote

from errscan.analyzer.repo import redact
from errscan.models import ErrorRecord

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# No informationUri or helpUri: errscan has no documentation page at an address of its
# own, and SARIF's links must never lead to one that does not exist; help.text says it.


def document(
    records: Iterable[ErrorRecord], repo: str, commit: str, version: str, web: str | None
) -> dict[str, Any]:
    records = list(records)
    rules: dict[str, dict[str, Any]] = {}
    for record in records:
        rule = _rule_id(record)
        if rule not in rules:
            rules[rule] = _rule(rule, record)
    order = {rule: i for i, rule in enumerate(sorted(rules))}
    results = [_result(record, order) for record in records]
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "errscan",
                "version": version,
                "semanticVersion": version,
                "rules": [rules[rule] for rule in sorted(rules)],
            }
        },
        "originalUriBaseIds": {"SRCROOT": _root(repo, commit, web)},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }
    where = _repository_uri(repo, web)
    if where is not None:  # a local path is not said: only repository-relative URIs
        run["versionControlProvenance"] = [
            {"repositoryUri": where, "revisionId": commit, "mappedTo": {"uriBaseId": "SRCROOT"}}
        ]
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}


def render(
    records: Iterable[ErrorRecord], repo: str, commit: str, version: str, web: str | None
) -> Iterator[str]:
    yield json.dumps(document(records, repo, commit, version, web), indent=2, ensure_ascii=False)
    yield "\n"


def _rule_id(record: ErrorRecord) -> str:
    return record.exception_qualname or record.exception or f"errscan.{record.kind}"


def _rule(rule: str, record: ErrorRecord) -> dict[str, Any]:
    name = rule.rsplit(".", 1)[-1]
    described = record.exception_doc or f"Code that raises {name}."
    return {
        "id": rule,
        "name": "".join(part[:1].upper() + part[1:] for part in name.replace("_", " ").split()),
        "shortDescription": {"text": f"{name} raised."},
        "fullDescription": {"text": described if described.endswith(".") else described + "."},
        "help": {"text": f"Where the code raises {name}, and with which message."},
        "defaultConfiguration": {"level": "none"},
    }


def _result(record: ErrorRecord, order: dict[str, int]) -> dict[str, Any]:
    rule = _rule_id(record)
    text = record.message or f"{record.exception or 'Error'} (no message)"
    if not text.endswith("."):
        text += "."
    return {
        "ruleId": rule,
        "ruleIndex": order[rule],
        # a catalogue entry, not a finding: kind informational, whose level SARIF 2.1.0
        # (3.27.10) requires to be "none"
        "level": "none",
        "kind": "informational",
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": quote(record.file), "uriBaseId": "SRCROOT"},
                    "region": {
                        "startLine": record.line,
                        "endLine": record.end_line,
                        "startColumn": record.col + 1,
                    },
                }
            }
        ],
        "partialFingerprints": {"errscanId/v1": record.id},
        "properties": {"kind": record.kind, "function": record.function, "area": record.area},
    }


def _repository_uri(repo: str, web: str | None) -> str | None:
    """The repository's address: its web page, or the URL it was fetched from; None for
    a local path or file:// URL, which would tell a reader where it sat on this machine."""
    if web:
        return web
    if "://" in repo and not repo.lower().startswith("file:"):
        return redact(repo)
    return None


def _root(repo: str, commit: str, web: str | None) -> dict[str, Any]:
    """SRCROOT, to which every result's file is relative (SARIF 3.14.14)."""
    if web:
        return {"uri": f"{web}/blob/{commit}/"}
    where = _repository_uri(repo, None)
    if where is not None:
        return {"uri": where.rstrip("/") + "/"}
    return {"description": {"text": "The root of the scanned repository's work tree."}}
