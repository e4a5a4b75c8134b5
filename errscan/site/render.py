"""The one renderer of errscan's pages: Jinja2 templates (package data) with autoescape,
shared by the site, `show --format html` and `show` Markdown.

Everything a template prints from a scanned repository or a model is untrusted: HTML
templates escape it (autoescape), the Markdown template through the `inline`,
`code_span` and `fence` filters. Data reaches a page's scripts only as JSON in a
`<script type="application/json">` block, every `<`, `>` and `&` of it escaped.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

from errscan.escape import code_span, fence, inline, link_url
from errscan.tempname import write_atomically

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
    """The Jinja2 environment (loaded on first use: only the pages need Jinja2), its
    templates compiled once and kept in errscan's cache (_CompiledTemplates)."""
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("errscan.site", "templates"),
        bytecode_cache=_compiled_templates(),
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


def _compiled_templates() -> Any:
    """The cache of compiled templates, in errscan's cache folder (ERRSCAN_CACHE_DIR, else
    the user's), one folder per Jinja2 version and interpreter."""
    import sys

    import jinja2

    from errscan.api import default_cache_dir

    class CompiledTemplates(jinja2.BytecodeCache):
        """Each template's code as Jinja2 compiled it (about 20 ms to compile the site's,
        2 ms to load), in a file of its own: a SHA-256 of the rest, then the rest. A file
        missing, damaged or of another template's source (Jinja2 checks the source's
        checksum) means compiling it again; one that cannot be written, nothing kept."""

        def __init__(self, folder: Path) -> None:
            self.folder = folder

        def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            try:
                data = (self.folder / f"{bucket.key}.bin").read_bytes()
            except OSError:
                return
            if hashlib.sha256(data[32:]).digest() != data[:32]:
                return
            try:
                bucket.bytecode_from_string(data[32:])
            except Exception:  # anything unreadable: compiled again
                bucket.reset()

        def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
            body = bucket.bytecode_to_string()
            with contextlib.suppress(OSError):
                self.folder.mkdir(parents=True, exist_ok=True)
                path = self.folder / f"{bucket.key}.bin"
                write_atomically(path, hashlib.sha256(body).digest() + body)

    tag = f"jinja2-{jinja2.__version__}-{sys.implementation.cache_tag}"
    return CompiledTemplates(default_cache_dir() / "templates" / tag)


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
