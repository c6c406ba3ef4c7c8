"""The `?cursor=&limit=` pair every listing takes (DESIGN.md §4)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Query

from gateway.contracts.common import PAGE_LIMIT_MAX

DEFAULT_LIMIT = 50
CURSOR_MAX_LENGTH = 512


@dataclass(frozen=True, slots=True)
class PageRequest:
    cursor: str
    limit: int


def _page(
    cursor: Annotated[
        str,
        Query(
            max_length=CURSOR_MAX_LENGTH,
            pattern=r"^[A-Za-z0-9_=-]*$",
            description="the next_cursor of the previous page",
        ),
    ] = "",
    limit: Annotated[int, Query(ge=1, le=PAGE_LIMIT_MAX, description="items per page")] = DEFAULT_LIMIT,
) -> PageRequest:
    return PageRequest(cursor=cursor, limit=limit)


PageQuery = Annotated[PageRequest, Depends(_page)]
