"""The operator console: the built single-page app, served at /console/.

The bundle is committed in gateway/console_dist so that a Python-only install
serves it. Hashed assets never change under their name and are cached for a
year; index.html is revalidated on every load so a new release is picked up
at once. Every other console path answers index.html, because the app routes
in the browser and a reload or a shared link lands on any of its paths.

The console is a client of the REST API like any other: it holds its token in
session storage and sends it as a Bearer header. Nothing here reads a cookie,
so there is no CSRF surface, and the sign-in token travels in the URL
fragment, which browsers never send to a server.
"""

from __future__ import annotations

import gzip
from functools import lru_cache
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, RedirectResponse, Response

from gateway.errors import envelope

DIST = Path(__file__).resolve().parent / "console_dist"
PREFIX = "/console"
# A sign-in link is printed to a terminal and may sit in its scrollback, so
# its token lasts a working day rather than the dev token's default.
LINK_TTL_S = 8 * 3600

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
# Scripts and data only from this origin; inline styles are allowed because
# the app positions chart marks with style attributes.
POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
        "form-action 'self'",
    ]
)
PAGE_HEADERS = {
    "Cache-Control": REVALIDATE,
    "Content-Security-Policy": POLICY,
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
}


def sign_in_link(host: str, port: int, token: str) -> str:
    """The console URL that signs in with `token`, carried in the fragment so
    it never reaches a server log or a Referer header."""
    # A gateway bound to every interface is still reached on loopback from here.
    reachable = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    if ":" in reachable:
        reachable = f"[{reachable}]"
    return f"http://{reachable}:{port}{PREFIX}/#token={token}"


# Longer than any hashed asset's path; past it, no file is looked for.
MAX_ASSET_PATH = 255


def _inside(root: Path, relative: str) -> Path | None:
    """The file `relative` names under root, or None; never a path outside root.

    A path the filesystem cannot even look up (a NUL, a name past its
    length limit) names no asset: it is a 404 like any other, never a
    traceback per request to anyone who sends one.
    """
    if len(relative) > MAX_ASSET_PATH or "\x00" in relative:
        return None
    try:
        candidate = (root / relative).resolve()
        if candidate != root and root not in candidate.parents:
            return None
        return candidate if candidate.is_file() else None
    except (OSError, ValueError):
        return None


@lru_cache(maxsize=64)
def _gzipped(path: Path, mtime_ns: int) -> bytes:
    # Assets never change under their name, so each is compressed once per
    # process; the modification time keys the cache for a rebuilt bundle.
    return gzip.compress(path.read_bytes(), compresslevel=9)


def _asset(path: Path, accept_encoding: str) -> Response:
    headers = {"Cache-Control": IMMUTABLE, "X-Content-Type-Options": "nosniff", "Vary": "Accept-Encoding"}
    if "gzip" not in accept_encoding.lower():
        return FileResponse(path, headers=headers)
    # A third of the bytes over the wire; the script is most of a first load.
    body = _gzipped(path, path.stat().st_mtime_ns)
    media_type = FileResponse(path).media_type
    return Response(body, media_type=media_type, headers={**headers, "Content-Encoding": "gzip"})


def mount(app: FastAPI, dist: Path = DIST) -> None:
    root = dist.resolve()

    @app.get("/", include_in_schema=False)
    async def home() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    @app.get(PREFIX, include_in_schema=False)
    async def console_root() -> RedirectResponse:
        return RedirectResponse(f"{PREFIX}/", status_code=307)

    @app.get(PREFIX + "/{path:path}", include_in_schema=False)
    async def console(path: str, request: Request) -> Response:
        index = root / "index.html"
        if not index.is_file():
            return envelope(503, "CONSOLE_NOT_BUILT", "the console bundle is missing; run `make console`")
        if path.startswith("assets/"):
            asset = _inside(root, path)
            if asset is None:
                # A stale page asking for an asset of an older release must
                # fail plainly, not receive index.html as JavaScript.
                return envelope(404, "NOT_FOUND", "no such console asset")
            return _asset(asset, request.headers.get("accept-encoding", ""))
        return FileResponse(index, media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)
