"""What a model is told of a record, and what it must answer.

facts(record, find)  ->  {"message_template": "bad name {name!r}", "exception": ..., ...}
digest(facts)        ->  "5c0f…": an enrichment is kept for as long as this is the same
messages(facts)      ->  the chat messages of the versioned prompt, the facts fenced as data
problems(answer)     ->  [] for an answer that fits the schema, else what is wrong
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from typing import Any

from errscan.models import ErrorRecord

PROMPT_VERSION = "v1"  # the prompt file's name: a new prompt, a new enrichment
_RELATED = 8  # related errors' messages sent

Find = Callable[[str], "ErrorRecord | None"]


def facts(record: ErrorRecord, find: Find) -> dict[str, Any]:
    """The record's facts that the prose is about, nothing that moves when the error does
    not change (no line numbers, commit or URL): unchanged facts keep their enrichment."""
    related = [find(record_id) for record_id in record.related[:_RELATED]]
    return {
        "repo": record.repo,
        "kind": record.kind,
        "exception": record.exception_qualname or record.exception,
        "exception_bases": list(record.exception_bases),
        "exception_doc": record.exception_doc,
        "message_template": record.message,
        "other_message_templates": list(record.message_candidates[1:]),
        "file": record.file,
        "function": record.function,
        "code_around": record.context.code,
        "conditions": list(record.guards),
        "trigger": record.trigger,
        "environment_variables": list(record.env_vars),
        "related_errors": [
            {"exception": r.exception, "message_template": r.message}
            for r in related
            if r is not None
        ],
    }


def digest(found: dict[str, Any]) -> str:
    text = json.dumps(found, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:32]


@cache
def _prompt() -> str:
    return (resources.files("errscan.enrichment") / f"prompt_{PROMPT_VERSION}.md").read_text(
        "utf-8"
    )


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(
        (resources.files("errscan.enrichment") / "schema.json").read_text("utf-8")
    )
    return loaded


def messages(found: dict[str, Any]) -> list[dict[str, str]]:
    """The chat messages: the facts as JSON, ASCII only, between two marker lines; JSON
    escapes every newline and quote, so no text of the code can end the fence."""
    data = json.dumps(found, sort_keys=True, ensure_ascii=True, indent=1)
    text = _prompt().replace("@@REPO@@", json.dumps(found.get("repo") or "(unknown)"))
    return [
        {"role": "system", "content": "You explain errors in source code. You answer in JSON."},
        {"role": "user", "content": text.replace("@@FACTS@@", data)},
    ]


def problems(value: object, rule: dict[str, Any] | None = None, where: str = "$") -> list[str]:
    """What is wrong with `value` against the JSON Schema `rule` (default: the answer's
    schema). The subset the schema uses: type, required, properties,
    additionalProperties, items, min/maxLength, min/maxItems."""
    rule = schema() if rule is None else rule
    kinds = rule.get("type")
    if kinds is not None:
        allowed = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is(value, kind) for kind in allowed):
            return [f"{where}: not {' or '.join(allowed)}"]
    found: list[str] = []
    if isinstance(value, str):
        if len(value) < rule.get("minLength", 0):
            found.append(f"{where}: shorter than {rule['minLength']}")
        if "maxLength" in rule and len(value) > rule["maxLength"]:
            found.append(f"{where}: longer than {rule['maxLength']}")
    if isinstance(value, list):
        if len(value) < rule.get("minItems", 0):
            found.append(f"{where}: fewer than {rule['minItems']} items")
        if "maxItems" in rule and len(value) > rule["maxItems"]:
            found.append(f"{where}: more than {rule['maxItems']} items")
        for i, item in enumerate(value):
            found += problems(item, rule.get("items", {}), f"{where}[{i}]")
    if isinstance(value, dict):
        properties = rule.get("properties", {})
        found += [f"{where}: no {key!r}" for key in rule.get("required", ()) if key not in value]
        if rule.get("additionalProperties") is False:
            found += [f"{where}: unexpected {key!r}" for key in value if key not in properties]
        for key, item in value.items():
            if key in properties:
                found += problems(item, properties[key], f"{where}.{key}")
    return found


def _is(value: object, kind: str) -> bool:
    if kind == "object":
        return isinstance(value, dict)
    if kind == "array":
        return isinstance(value, list)
    if kind == "string":
        return isinstance(value, str)
    if kind == "null":
        return value is None
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return False


def answer_of(content: str) -> dict[str, Any] | None:
    """The JSON object a model's reply holds (a ```json fence around it is taken off)."""
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0]
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
