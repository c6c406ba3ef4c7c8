"""How engines and services reach NATS: with a credential, over TLS when asked,
and with the reply inbox an engine's permissions allow.

The engine client and the services both open their connections here, so a
refused credential and a TLS setting mean the same thing on both sides.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from os import PathLike
from urllib.parse import urlsplit

import nats
from nats.aio.client import Client

from outrider.errors import OutriderError

_log = logging.getLogger(__name__)

# The shared engine user receives JetStream acknowledgements on inboxes under
# this prefix (an engine with its own credential, under this prefix, '_' and
# its name: outrider.engine_identity), and may subscribe to nothing else.
# Under the default _INBOX it could subscribe to the services' inboxes too,
# where JetStream delivers the events they pull, and so read every stream it
# may not consume.
ENGINE_INBOX_PREFIX = "_INBOX_engine"
SERVICE_INBOX_PREFIX = "_INBOX"


class CredentialRefused(OutriderError):
    """NATS refused the credential (a user and password, or an nkey);
    retrying with it cannot help."""

    def __init__(self, message: str) -> None:
        super().__init__("NATS_CREDENTIALS_REFUSED", message)


def servers(url: str) -> list[str]:
    """The servers of a NATS URL that may list a cluster's members
    comma-separated. The client tries them in turn and moves to another when
    the one it holds goes away: handing it only the first would make that one
    server a single point of failure at connect time."""
    return [server.strip() for server in url.split(",") if server.strip()]


def shown(url: str) -> str:
    """The URL without any user or password in it, for messages and logs."""
    if "," in url:
        return ",".join(shown(server) for server in servers(url))
    parts = urlsplit(url)
    if parts.hostname is None or "@" not in parts.netloc:
        return url
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return parts._replace(netloc=f"{host}:{parts.port}" if parts.port else host).geturl()


def uses_tls(url: str, tls_ca: str | PathLike[str] | None) -> bool:
    return tls_ca is not None or url.startswith("tls://")


def _tls_context(tls_ca: str | PathLike[str] | None) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=None if tls_ca is None else str(tls_ca))


def _is_refusal(exc: BaseException) -> bool:
    return "authorization violation" in str(exc).lower()


async def open_connection(
    url: str,
    *,
    name: str,
    user: str | None = None,
    password: str | None = None,
    nkey_seed: str | None = None,
    tls_ca: str | PathLike[str] | None = None,
    inbox_prefix: str = SERVICE_INBOX_PREFIX,
    timeout: float | None = None,
) -> Client:
    """Connect with a user and password, or with an nkey seed (the server
    sends a challenge the seed signs; the seed itself never leaves),
    retrying while the server cannot be reached (for `timeout` seconds, or
    for as long as it takes when None); raise CredentialRefused at
    once when the server refuses the credential, and TimeoutError naming the
    last problem when the time runs out.

    TLS, when the URL is `tls://` or a CA is given, starts with the handshake,
    before the server says anything: a client that reads the server's greeting
    to learn whether to use TLS can be told "no" by anyone on the path, and
    then sends its password in clear.
    """
    refused = asyncio.Event()
    last_error: list[BaseException] = []
    connected = False

    async def on_error(exc: Exception) -> None:
        last_error[:] = [exc]
        if _is_refusal(exc):
            refused.set()
        if connected and ("violation" in str(exc).lower()):
            # A permission refused after connecting is a misconfiguration
            # someone must see; the reconnect chatter of an outage is not.
            _log.warning("NATS refused an operation", extra={"nats_url": shown(url), "reason": str(exc)})

    options: dict[str, object] = {
        "name": name,
        "connect_timeout": 2,
        "allow_reconnect": True,
        "max_reconnect_attempts": -1,
        "error_cb": on_error,
        "inbox_prefix": inbox_prefix,
    }
    if user is not None:
        options.update(user=user, password=password or "")
    if nkey_seed is not None:
        options.update(nkeys_seed_str=nkey_seed)
    if uses_tls(url, tls_ca):
        options.update(tls=_tls_context(tls_ca), tls_handshake_first=True)

    connecting = asyncio.ensure_future(nats.connect(servers(url), **options))
    refusal = asyncio.ensure_future(refused.wait())
    try:
        done, _ = await asyncio.wait({connecting, refusal}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        refusal.cancel()
    if connecting in done and not refused.is_set():
        client = connecting.result()
        connected = True
        return client
    await _abandon(connecting)
    if refused.is_set():
        raise CredentialRefused(f"NATS at {shown(url)} refused {_credential(user, nkey_seed)}")
    reason = f"{type(last_error[0]).__name__}: {last_error[0]}" if last_error else "no answer"
    raise TimeoutError(f"no connection to NATS at {shown(url)} within {timeout or 0:g}s ({reason})")


def _credential(user: str | None, nkey_seed: str | None) -> str:
    if user is not None:
        return f"user {user!r}"
    if nkey_seed is not None:
        return "the engine key's nkey (is the key configured, and the server's block printed since?)"
    return "a connection without credentials"


async def _abandon(connecting: asyncio.Future[Client]) -> None:
    if connecting.done() and not connecting.cancelled() and connecting.exception() is None:
        await connecting.result().close()
        return
    connecting.cancel()
    # However an abandoned attempt ends, it is not news.
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await connecting
