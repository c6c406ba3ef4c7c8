"""Human-input sources: an HTTP JSON feed, configured per source string.

The feed contract, one page per request:

    GET <url>?subject=<subject id>&after=<cursor>&limit=<n>
    Authorization: Bearer <token>            (when a token is configured)

    200 {"items": [{"id", "author", "written_at", "body"}, ...],
         "next_cursor": "<position after the last item>", "has_more": bool}

Items come in the order they were written; `written_at` is RFC 3339 with an
offset. `after` is omitted for the first read. The adapter follows pages
until `has_more` is false and answers with the last `next_cursor`. It holds
no state, so being asked for the same range twice simply reads it twice.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import httpx

from services.common.settings import SettingsError
from services.decisions.human.rules import HumanInput, HumanInputSource, SourceCursor, Subject

SETTING = "OUTRIDER_HUMAN_SOURCES"
DEFAULT_TIMEOUT_S = 10.0
PAGE_SIZE = 100


class SourceError(Exception):
    """A source could not give a trustworthy answer; `reason` says why."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.reason = reason


class SourceUnavailable(SourceError):
    """Unreachable, refused, or answered with an error status: worth retrying."""


class SourceTimeout(SourceUnavailable):
    pass


class SourceMalformed(SourceError):
    """Answered, but not in the feed's shape: retrying will not help."""


@dataclass(frozen=True, slots=True)
class HttpFeedSource:
    source: str
    url: str
    # Kept out of repr so a logged adapter never carries the secret.
    token: str = field(repr=False)
    timeout_s: float = DEFAULT_TIMEOUT_S

    async def fetch_after(self, subject: Subject, cursor: SourceCursor) -> tuple[list[HumanInput], SourceCursor]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            # One budget for the whole read, not per page: a lease waits on
            # this, and a feed that pages slowly forever must still end it.
            async with asyncio.timeout(self.timeout_s):
                async with httpx.AsyncClient(timeout=self.timeout_s, headers=headers) as client:
                    return await self._read(client, subject, cursor)
        except (TimeoutError, httpx.TimeoutException):
            raise SourceTimeout(self.source, f"no complete answer within {self.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise SourceUnavailable(self.source, f"request failed: {type(exc).__name__}") from None

    async def _read(
        self, client: httpx.AsyncClient, subject: Subject, cursor: SourceCursor
    ) -> tuple[list[HumanInput], SourceCursor]:
        inputs: list[HumanInput] = []
        position = cursor.position
        while True:
            params = {"subject": subject.id, "limit": str(PAGE_SIZE)}
            if position:
                params["after"] = position
            reply = await client.get(self.url, params=params)
            if reply.status_code != 200:
                raise SourceUnavailable(self.source, f"answered HTTP {reply.status_code}")
            try:
                page = reply.json()
            except ValueError:
                raise SourceMalformed(self.source, "answer is not JSON") from None
            items, next_position, has_more = self._page(page)
            inputs.extend(self._input(subject, item, len(inputs) + n) for n, item in enumerate(items))
            if has_more and (not next_position or next_position == position):
                # Following it again would ask for the same page forever.
                raise SourceMalformed(self.source, "has_more without a cursor that moves on")
            position = next_position or position
            if not has_more:
                return inputs, SourceCursor(subject_id=subject.id, source=self.source, position=position)

    def _page(self, page: Any) -> tuple[Sequence[Any], str, bool]:
        if not isinstance(page, dict) or not isinstance(page.get("items"), list):
            raise SourceMalformed(self.source, "answer has no items list")
        next_position = page.get("next_cursor") or ""
        has_more = page.get("has_more", False)
        if not isinstance(next_position, str):
            raise SourceMalformed(self.source, "next_cursor is not a string")
        if not isinstance(has_more, bool):
            raise SourceMalformed(self.source, "has_more is not a boolean")
        return page["items"], next_position, has_more

    def _input(self, subject: Subject, item: Any, index: int) -> HumanInput:
        if not isinstance(item, dict):
            raise SourceMalformed(self.source, f"item {index} is not an object")
        external_id = item.get("id")
        # An id missing here is passed on empty, not invented: the import
        # rules refuse the whole range for it, naming the field.
        if external_id is None:
            external_id = ""
        elif isinstance(external_id, int) and not isinstance(external_id, bool):
            external_id = str(external_id)
        elif not isinstance(external_id, str):
            raise SourceMalformed(self.source, f"item {index}: id is not a string or integer")
        body = item.get("body")
        if body is None:
            body = ""
        elif not isinstance(body, str):
            raise SourceMalformed(self.source, f"item {index}: body is not a string")
        author = item.get("author") or ""
        if not isinstance(author, str):
            raise SourceMalformed(self.source, f"item {index}: author is not a string")
        written = item.get("written_at")
        try:
            written_at = datetime.fromisoformat(written) if isinstance(written, str) else None
        except ValueError:
            written_at = None
        if written_at is None or written_at.tzinfo is None:
            raise SourceMalformed(self.source, f"item {index}: written_at is not RFC 3339 with an offset")
        # Provenance is the source that was asked, whatever the item claims,
        # so one feed can never write under another's name or subject.
        return HumanInput(
            provider=self.source,
            external_id=external_id,
            subject_id=subject.id,
            author=author,
            written_at=written_at,
            body=body,
        )


def build_sources(config: Mapping[str, Mapping[str, object]]) -> dict[str, HumanInputSource]:
    """One adapter per configured source string; raises SettingsError naming the entry."""
    sources: dict[str, HumanInputSource] = {}
    for source, entry in config.items():
        where = f"{SETTING}[{source!r}]"
        if ":" not in source or not source.split(":", 1)[0]:
            raise SettingsError(f"{where}: a source is named provider:instance/project")
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise SettingsError(f"{where}.url must be an http(s) URL")
        token = entry.get("token", "")
        if not isinstance(token, str):
            raise SettingsError(f"{where}.token must be a string")
        timeout_s = entry.get("timeout_s", DEFAULT_TIMEOUT_S)
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, int | float) or timeout_s <= 0:
            raise SettingsError(f"{where}.timeout_s must be a positive number of seconds")
        sources[source] = HttpFeedSource(source=source, url=url, token=token, timeout_s=float(timeout_s))
    return sources
