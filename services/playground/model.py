"""The model client, built from settings alone."""

from __future__ import annotations

import anthropic
import httpx2

from services.common.settings import Settings

DEFAULT_BASE_URL = "https://api.anthropic.com"
# The SDK retries 408, 409, 429 and 5xx with backoff; the run's deadline
# bounds the total either way.
MAX_RETRIES = 2


def model_client(
    settings: Settings, *, http_client: httpx2.AsyncClient | None = None
) -> anthropic.AsyncAnthropic | None:
    """The client for the configured API key, or None when there is none.

    The base URL is always passed: left out, the SDK would fall back to the
    process environment and its own config files, and a setting read there
    is one nobody can see in Settings.
    """
    if not settings.anthropic_api_key:
        return None
    return anthropic.AsyncAnthropic(
        api_key=settings.anthropic_api_key,
        base_url=settings.anthropic_base_url or DEFAULT_BASE_URL,
        max_retries=MAX_RETRIES,
        http_client=http_client,
    )
