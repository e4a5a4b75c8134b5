"""A record as a page of an error knowledge base: Markdown, or a standalone HTML page.

# sgl-project/sglang · raise · ValueError
## Error message / ## What it means* / ## Source (thrown at FILE:LINE, code, pinned link)
## Solutions* / ## When it happens (Common situations*) / ## Related errors / ## Record

* where an enrichment of the record's facts is stored, marked "AI-assisted (MODEL)": the
model's answer is data, every text of it escaped like the repository's.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

from errscan.analyzer.store import StoredEnrichment
from errscan.escape import code_span, fence, inline, link_url
from errscan.models import ErrorRecord

Find = Callable[[str], "ErrorRecord | None"]
CUT = 60  # characters of a related error's message


def cut(text: str | None, limit: int = CUT) -> str:
    text = " ".join((text or "(no message)").split())
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def _code_lines(record: ErrorRecord) -> list[tuple[bool, int, str]]:
    """(is a line of the site, number, text) for each context line."""
    lines = record.context.code.split("\n")
    start = record.context.start_line
    return [
        (record.line <= start + i <= record.end_line, start + i, text)
        for i, text in enumerate(lines)
    ]


def _title(record: ErrorRecord) -> str:
    return f"{record.repo or '(source)'} · {record.kind} · {record.exception or 're-raise'}"


def _said(enrichment: StoredEnrichment | None, key: str) -> str:
    value = enrichment.answer.get(key) if enrichment is not None else None
    return value if isinstance(value, str) else ""


def _steps(enrichment: StoredEnrichment | None) -> list[tuple[str, str]]:
    steps = enrichment.answer.get("solutions") if enrichment is not None else None
    out = []
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict) and isinstance(step.get("step"), str):
            code = step.get("code")
            out.append((step["step"], code if isinstance(code, str) else ""))
    return out


def _marked(enrichment: StoredEnrichment) -> str:
    return f"AI-assisted ({enrichment.model})"


def markdown(record: ErrorRecord, find: Find, enrichment: StoredEnrichment | None = None) -> str:
    """The page as Markdown that stays what it is in any renderer, HTML-allowing ones
    included: every text from the repository (or a model) escaped, every block fenced."""
    message = record.message or f"(no message: {record.message_source})"
    out = [f"# {inline(_title(record))}", "", "## Error message", "", fence(message, "text"), ""]
    if len(record.message_candidates) > 1:
        out += ["Other messages on other paths:", ""]
        out += [f"- {code_span(c)}" for c in record.message_candidates[1:]] + [""]
    if enrichment is not None and _said(enrichment, "what_it_means"):
        out += ["## What it means", "", f"*{inline(_marked(enrichment))}*", ""]
        out += [inline(_said(enrichment, "what_it_means")), ""]
    out += ["## Source", "", f"Thrown at {inline(record.file)}:{record.line}", ""]
    width = len(str(record.context.end_line))
    code = "\n".join(
        f"{'→' if marked else ' '} {number:>{width}} | {text}"
        for marked, number, text in _code_lines(record)
    )
    out += [fence(code, "python"), ""]
    url = link_url(record.url)
    if url:
        target = url.replace("(", "%28").replace(")", "%29")
        out += [f"[View on GitHub (pinned to {inline(record.commit[:10])})]({target})", ""]
    if enrichment is not None and _steps(enrichment):
        out += ["## Solutions", "", f"*{inline(_marked(enrichment))}*", ""]
        for number, (step, code) in enumerate(_steps(enrichment), 1):
            out += [f"{number}. {inline(step)}", ""]
            if code:
                out += [fence(code, "python"), ""]
    out += ["## When it happens", "", f"Trigger: {inline(record.trigger)}", ""]
    if record.guards:
        out += ["Conditions:", ""] + [f"- {code_span(guard)}" for guard in record.guards] + [""]
    if record.env_vars:
        out += ["Environment variables: " + ", ".join(code_span(v) for v in record.env_vars), ""]
    if enrichment is not None and _said(enrichment, "common_situations"):
        said = inline(_said(enrichment, "common_situations"))
        out += [f"Common situations (*{inline(_marked(enrichment))}*): {said}", ""]
    out += ["## Related errors", ""]
    for related in (find(i) for i in record.related):
        if related is not None:
            where = inline(f"{related.file}:{related.line}")
            name = inline(related.exception or "re-raise")
            message = inline(cut(related.message))
            out.append(f"- {name}: {message} ({code_span(related.id)}, {where})")
    if not record.related:
        out.append("None in this scan.")
    out += ["", "## Record", "", fence(_json(record), "json"), ""]
    return "\n".join(out)


def _json(record: ErrorRecord) -> str:
    # ASCII: every character a page must not show raw (controls, bidi marks) as \\u escapes
    return json.dumps(record.to_dict(), sort_keys=True, ensure_ascii=True, indent=2)


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #1f2328; line-height: 1.5; }
h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; border-bottom: 1px solid #d0d7de; }
pre { background: #f6f8fa; padding: 0.8rem; overflow-x: auto; border-radius: 6px; }
.message { font-size: 1.05rem; white-space: pre-wrap; }
.line, .site { display: block; min-height: 1.2em; } .site { background: #fff3cd; }
.num { color: #8c959f; user-select: none; }
.ai { color: #8250df; font-size: 0.85rem; }
"""


def html_page(record: ErrorRecord, find: Find, enrichment: StoredEnrichment | None = None) -> str:
    e = html.escape
    ai = f'<p class="ai">{e(_marked(enrichment))}</p>' if enrichment is not None else ""
    meaning = _said(enrichment, "what_it_means")
    meaning_html = f"<h2>What it means</h2>{ai}<p>{e(meaning)}</p>" if meaning else ""
    steps = "".join(
        f"<li>{e(step)}" + (f"<pre><code>{e(code)}</code></pre>" if code else "") + "</li>"
        for step, code in _steps(enrichment)
    )
    steps_html = f"<h2>Solutions</h2>{ai}<ol>{steps}</ol>" if steps else ""
    situations = _said(enrichment, "common_situations")
    situations_html = (
        f'<p>Common situations (<span class="ai">{e(_marked(enrichment))}</span>): '
        f"{e(situations)}</p>"
        if situations and enrichment is not None
        else ""
    )
    code = "".join(
        f'<span class="{"site" if marked else "line"}"><span class="num">{number:>5} </span>'
        f"{e(text)}</span>"
        for marked, number, text in _code_lines(record)
    )
    related = (
        "".join(
            f"<li>{e(r.exception or 're-raise')}: {e(cut(r.message))} "
            f"(<code>{e(r.id)}</code>, {e(r.file)}:{r.line})</li>"
            for r in (find(i) for i in record.related)
            if r is not None
        )
        or "<li>None in this scan.</li>"
    )
    guards = "".join(f"<li><code>{e(g)}</code></li>" for g in record.guards)
    env = ", ".join(f"<code>{e(v)}</code>" for v in record.env_vars)
    url = link_url(record.url)
    link = (
        f'<p><a href="{e(url)}">View on GitHub (pinned to {e(record.commit[:10])})</a></p>'
        if url
        else ""
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{e(record.exception or "re-raise")}: {e(cut(record.message))}</title>
<style>{_STYLE}</style></head>
<body>
<h1>{e(_title(record))}</h1>
<h2>Error message</h2>
<pre class="message">{e(record.message or "(no message: " + record.message_source + ")")}</pre>
{meaning_html}
<h2>Source</h2>
<p>Thrown at <code>{e(record.file)}:{record.line}</code></p>
<pre><code>{code}</code></pre>
{link}
{steps_html}
<h2>When it happens</h2>
<p>Trigger: {e(record.trigger)}</p>
{f"<p>Conditions:</p><ul>{guards}</ul>" if guards else ""}
{f"<p>Environment variables: {env}</p>" if env else ""}
{situations_html}
<h2>Related errors</h2>
<ul>{related}</ul>
<h2>Record</h2>
<pre><code>{e(_json(record))}</code></pre>
</body></html>
"""
