"""The one renderer of errscan's pages: Jinja2 templates (package data) with autoescape,
shared by the site, `show --format html` and `show` Markdown.

Everything a template prints from a scanned repository or a model is untrusted: HTML
templates escape it (autoescape), the Markdown template through the `inline`,
`code_span` and `fence` filters. Data reaches a page's scripts only as JSON in a
`<script type="application/json">` block, every `<`, `>` and `&` of it escaped.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from errscan.escape import code_span, fence, inline, link_url

CUT = 60  # characters of a message cut for a heading or a list


def cut(text: str | None, limit: int = CUT) -> str:
    """The text on one line, cut at `limit` characters with an ellipsis."""
    text = " ".join((text or "(no message)").split())
    return text if len(text) <= limit else text[:limit].rstrip() + "…"


def json_script(value: object) -> str:
    """JSON to put inside `<script type="application/json">`: nothing in it can end the
    block or open another (`</script>`, `<!--`), whatever the text holds."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


@functools.cache
def environment() -> Any:
    """The Jinja2 environment (loaded on first use: only the pages need Jinja2)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("errscan.site", "templates"),
        autoescape=jinja2.select_autoescape(["html", "xml"], default_for_string=True),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        inline=inline,
        code_span=code_span,
        fence=fence,
        link_url=link_url,
        cut=cut,
        json_script=lambda value: markup(json_script(value)),
    )
    return env


def markup(text: str) -> Any:
    import markupsafe

    return markupsafe.Markup(text)  # only for text made safe: escaped, or errscan's own


def render(template: str, **values: object) -> str:
    return str(environment().get_template(template).render(**values))


def pygments_css() -> str:
    """The highlighting's colours, light, and dark where the reader's system asks."""
    from pygments.formatters import HtmlFormatter

    light = HtmlFormatter(style="default").get_style_defs(".highlight")  # type: ignore[no-untyped-call]
    dark = HtmlFormatter(style="monokai").get_style_defs(".highlight")  # type: ignore[no-untyped-call]
    return f"{light}\n@media (prefers-color-scheme: dark) {{\n{dark}\n}}\n"
