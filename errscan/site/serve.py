"""`errscan serve DIR`: a local preview of a built site, on 127.0.0.1 by default.

Files are served from DIR only (never a path out of it, never a link out of it), with
their content types (`.js` as JavaScript, `.json` as JSON, `.wasm` for Pagefind); an
address without an extension that names `X.json` or `X.html` gets it (`/api/errors/ID`),
and a folder its `index.html`. Anything else is the site's 404 page.
"""

from __future__ import annotations

import http.server
import mimetypes
import posixpath
import urllib.parse
from functools import partial
from pathlib import Path

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".css": "text/css; charset=utf-8",
    ".xml": "application/xml",
    ".wasm": "application/wasm",
    ".svg": "image/svg+xml",
}


class Handler(http.server.SimpleHTTPRequestHandler):
    """Serves the site's tree with fixed content types; no listing of folders."""

    extensions_map = {  # noqa: RUF012 - the base class's own attribute, replaced
        **mimetypes.types_map, **_TYPES, "": "application/octet-stream"
    }  # fmt: skip

    def send_head(self):  # type: ignore[no-untyped-def]
        path = self._resolve(self.path)
        if path is None:
            return self._not_found()
        self.path = "/" + path.relative_to(Path(self.directory).resolve()).as_posix()
        return super().send_head()

    def _resolve(self, address: str) -> Path | None:
        """The file an address names in the site, or None."""
        root = Path(self.directory).resolve()
        parts = urllib.parse.unquote(urllib.parse.urlsplit(address).path)
        clean = posixpath.normpath(parts).lstrip("/")
        if clean in (".", ""):
            clean = ""
        if any(part.startswith(".") for part in clean.split("/") if part):
            return None  # the build's state (.errscan-site.db), a temp file: not the site's
        base = (root / clean).resolve()
        for found in (base, base / "index.html", base.with_name(base.name + ".json"),
                      base.with_name(base.name + ".html")):  # fmt: skip
            if found.is_file() and found.is_relative_to(root):
                return found
        return None

    def _not_found(self) -> None:
        page = Path(self.directory) / "404.html"
        body = page.read_bytes() if page.is_file() else b"Not found\n"
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
        return None

    def list_directory(self, path):  # type: ignore[no-untyped-def]
        return self._not_found()

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: a preview


def server(
    site: Path, host: str = "127.0.0.1", port: int = 8000
) -> http.server.ThreadingHTTPServer:
    """A server of the site at `site` (not yet serving: call serve_forever)."""
    handler = partial(Handler, directory=str(site))
    return http.server.ThreadingHTTPServer((host, port), handler)
