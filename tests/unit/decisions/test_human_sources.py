import pytest

from services.common.settings import SettingsError
from services.decisions.human.sources import (
    DEFAULT_TIMEOUT_S,
    HttpFeedSource,
    build_sources,
)

OPS = "tracker:ops/bookings"


def test_each_configured_source_gets_a_feed_under_its_own_name():
    sources = build_sources(
        {
            OPS: {"url": "https://tracker.example/feed", "token": "t-1", "timeout_s": 2},
            "chat:ops/dispatch": {"url": "http://chat.internal/feed"},
        }
    )

    assert sources[OPS] == HttpFeedSource(source=OPS, url="https://tracker.example/feed", token="t-1", timeout_s=2.0)
    assert sources["chat:ops/dispatch"] == HttpFeedSource(
        source="chat:ops/dispatch", url="http://chat.internal/feed", token="", timeout_s=DEFAULT_TIMEOUT_S
    )


@pytest.mark.parametrize(
    ("source", "entry", "named"),
    [
        ("bookings", {"url": "https://t.example/feed"}, "provider:instance/project"),
        (":ops/bookings", {"url": "https://t.example/feed"}, "provider:instance/project"),
        (OPS, {}, ".url"),
        (OPS, {"url": "ftp://t.example/feed"}, ".url"),
        (OPS, {"url": "https://t.example/feed", "token": 7}, ".token"),
        (OPS, {"url": "https://t.example/feed", "timeout_s": 0}, ".timeout_s"),
        (OPS, {"url": "https://t.example/feed", "timeout_s": "5"}, ".timeout_s"),
        (OPS, {"url": "https://t.example/feed", "timeout_s": True}, ".timeout_s"),
    ],
)
def test_a_bad_entry_is_refused_naming_the_setting_and_the_field(source, entry, named):
    with pytest.raises(SettingsError) as refused:
        build_sources({source: entry})

    assert "OUTRIDER_HUMAN_SOURCES" in str(refused.value)
    assert named in str(refused.value)
