"""A record as a page of an error knowledge base: Markdown, or a standalone HTML page.

# sgl-project/sglang · raise · ValueError
## Error message / ## Source (thrown at FILE:LINE, code, pinned link)
## When it happens / ## Related errors / ## Record (the JSON)
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable

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


def markdown(record: ErrorRecord, find: Find) -> str:
    """The page as Markdown that stays what it is in any renderer, HTML-allowing ones
    included: every text from the repository escaped, every block fenced."""
    message = record.message or f"(no message: {record.message_source})"
    out = [f"# {inline(_title(record))}", "", "## Error message", "", fence(message, "text"), ""]
    if len(record.message_candidates) > 1:
        out += ["Other messages on other paths:", ""]
        out += [f"- {code_span(c)}" for c in record.message_candidates[1:]] + [""]
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
    out += ["## When it happens", "", f"Trigger: {inline(record.trigger)}", ""]
    if record.guards:
        out += ["Conditions:", ""] + [f"- {code_span(guard)}" for guard in record.guards] + [""]
    if record.env_vars:
        out += ["Environment variables: " + ", ".join(code_span(v) for v in record.env_vars), ""]
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
"""


def html_page(record: ErrorRecord, find: Find) -> str:
    e = html.escape
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
<h2>Source</h2>
<p>Thrown at <code>{e(record.file)}:{record.line}</code></p>
<pre><code>{code}</code></pre>
{link}
<h2>When it happens</h2>
<p>Trigger: {e(record.trigger)}</p>
{f"<p>Conditions:</p><ul>{guards}</ul>" if guards else ""}
{f"<p>Environment variables: {env}</p>" if env else ""}
<h2>Related errors</h2>
<ul>{related}</ul>
<h2>Record</h2>
<pre><code>{e(_json(record))}</code></pre>
</body></html>
"""
