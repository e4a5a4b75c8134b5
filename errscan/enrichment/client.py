"""One chat completion from an OpenAI-compatible server, with retries.

    POST {endpoint}/v1/chat/completions  {"model": ..., "messages": [...], ...}

429 waits what Retry-After says (at most `max_wait`); 5xx answers, dropped connections,
time-outs and bodies that are not JSON are retried with exponential backoff and jitter,
`retries` times at most; other 4xx answers fail at once. The API key goes in the
Authorization header only: no reason, log or exception text ever holds it.
"""

from __future__ import annotations

import email.utils
import http.client
import json
import random
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import field
from typing import Any

from errscan.frozen import frozen

_REASON = 200  # characters of a server's answer kept in a failure's reason


@frozen
class Endpoint:
    url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    timeout: float = 120.0  # seconds per request
    retries: int = 4
    backoff: float = 1.0  # seconds before the first retry; doubled each time
    max_wait: float = 120.0  # the longest wait between tries, Retry-After included

    @property
    def completions(self) -> str:
        url = self.url.rstrip("/")
        if url.endswith("/chat/completions"):
            return url
        return f"{url}/chat/completions" if url.endswith("/v1") else f"{url}/v1/chat/completions"


@frozen
class Reply:
    content: str
    tokens_in: int
    tokens_out: int


class Failed(Exception):
    """A request that did not give an answer, after the retries it was allowed."""

    def __init__(self, reason: str, requests: int = 1) -> None:
        super().__init__(reason)
        self.requests = requests


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.wait = wait


class Unsupported(Failed):
    """The server refused the request's form (a 400, as for response_format)."""


def complete(
    endpoint: Endpoint,
    messages: list[dict[str, str]],
    schema: dict[str, Any] | None,
    sleep: Any = time.sleep,
) -> tuple[Reply, int]:
    """The reply, and how many requests it took."""
    body: dict[str, Any] = {"model": endpoint.model, "messages": messages, "temperature": 0}
    if schema is not None:
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "enrichment", "schema": schema, "strict": True},
        }
    data = json.dumps(body).encode("utf-8")
    for attempt in range(endpoint.retries + 1):
        try:
            return _post(endpoint, data), attempt + 1
        except Failed as failed:
            failed.requests = attempt + 1
            raise
        except _Retry as retry:
            if attempt == endpoint.retries:
                raise Failed(f"{retry} (after {attempt + 1} requests)", attempt + 1) from None
            wait = retry.wait
            if wait is None:
                wait = endpoint.backoff * 2**attempt * (0.5 + random.random() / 2)
            sleep(min(wait, endpoint.max_wait))
    raise AssertionError("unreachable")


def _post(endpoint: Endpoint, data: bytes) -> Reply:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    request = urllib.request.Request(endpoint.completions, data, headers, method="POST")
    opener = _opener(endpoint.completions)
    try:
        with opener.open(request, timeout=endpoint.timeout) as response:
            raw = response.read()
    except urllib.error.HTTPError as error:
        text = _said(error, endpoint)
        if error.code == 429:
            raise _Retry(
                f"HTTP 429 {text}", _retry_after(error.headers.get("Retry-After"))
            ) from None
        if error.code >= 500:
            raise _Retry(f"HTTP {error.code} {text}") from None
        if error.code == 400:
            raise Unsupported(f"HTTP 400 {text}") from None
        raise Failed(f"HTTP {error.code} {text}") from None
    except (TimeoutError, http.client.HTTPException, urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", None) or error
        raise _Retry(f"no answer: {_clean(str(reason), endpoint)}") from None
    try:
        answer = json.loads(raw)
        content = answer["choices"][0]["message"]["content"]
        usage = answer.get("usage") or {}
        if not isinstance(content, str):
            raise TypeError("content is not text")
        return Reply(content, int(usage.get("prompt_tokens", 0)),
                     int(usage.get("completion_tokens", 0)))  # fmt: skip
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise _Retry(f"not a chat completion: {_clean(str(error), endpoint)}") from None


def _opener(url: str) -> urllib.request.OpenerDirector:
    """No proxy for a server on this machine; the environment's proxies for others."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host in ("localhost", "::1") or host.startswith("127."):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait: Retry-After as a number of seconds or an HTTP date."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _said(error: urllib.error.HTTPError, endpoint: Endpoint) -> str:
    try:
        text = error.read(_REASON * 4).decode("utf-8", "replace")
    except (OSError, http.client.HTTPException):
        text = ""
    return _clean(text, endpoint)


def _clean(text: str, endpoint: Endpoint) -> str:
    """A server's words for a reason: one line, cut, and never the key (a server may
    echo what it was sent)."""
    if endpoint.api_key:
        text = text.replace(endpoint.api_key, "[key]")
    text = " ".join(text.split())
    return text if len(text) <= _REASON else text[:_REASON] + "…"
