"""One engine-key check for the whole platform: which engine a presented key
names, pinned as a table, and the same answer from the contexts' gRPC gate
and from the gateway's one dependency, which every engine route uses."""

from __future__ import annotations

import hmac
import re
from types import SimpleNamespace

import pytest
from fastapi.routing import APIRoute, iter_route_contexts

from gateway.app import create_app
from gateway.auth import EngineGate, exporter, internal, scraper
from gateway.errors import ApiError
from services.common import callers
from services.common.callers import engine_named, identify
from services.common.settings import load

DISPATCH, DISPATCH_PREVIOUS, SUPPORT, SHARED = "d" * 40, "p" * 40, "s" * 40, "x" * 40

# (what the case is, engines as configured, the key presented, the engine named)
TABLE = [
    ("an engine's key", {"dispatch": (DISPATCH,), "support": (SUPPORT,)}, SUPPORT, "support"),
    (
        "an engine's previous key, during a rollover",
        {"dispatch": (DISPATCH, DISPATCH_PREVIOUS)},
        DISPATCH_PREVIOUS,
        "dispatch",
    ),
    ("a wrong key", {"dispatch": (DISPATCH,)}, SUPPORT, None),
    ("a key cut short", {"dispatch": (DISPATCH,)}, DISPATCH[:-1], None),
    ("a key with more after it", {"dispatch": (DISPATCH,)}, DISPATCH + "d", None),
    ("a key in another case", {"dispatch": (DISPATCH,)}, DISPATCH.upper(), None),
    ("an empty presented key", {"dispatch": (DISPATCH,)}, "", None),
    ("an empty configured key, an empty presented key", {"blank": ("",)}, "", None),
    ("an empty configured key, any presented key", {"blank": ("",)}, SUPPORT, None),
    ("an empty configured key beside a real one", {"blank": ("",), "dispatch": (DISPATCH,)}, DISPATCH, "dispatch"),
    ("no engine configured", {}, DISPATCH, None),
    (
        "two engines with the same key: the first configured",
        {"dispatch": (SHARED,), "support": (SHARED,)},
        SHARED,
        "dispatch",
    ),
    ("the same two, configured the other way round", {"support": (SHARED,), "dispatch": (SHARED,)}, SHARED, "support"),
    (
        "one engine's key is another's previous one",
        {"dispatch": (DISPATCH, SHARED), "support": (SHARED,)},
        SHARED,
        "dispatch",
    ),
]
CASES = [pytest.param(engines, presented, named, id=case) for case, engines, presented, named in TABLE]


@pytest.mark.parametrize(("engines", "presented", "named"), CASES)
def test_the_engine_a_key_names(engines: dict[str, tuple[str, ...]], presented: str, named: str | None) -> None:
    assert engine_named(engines, presented) == named


@pytest.mark.parametrize(("engines", "presented", "named"), CASES)
def test_the_grpc_gate_names_the_same_engine(
    engines: dict[str, tuple[str, ...]], presented: str, named: str | None
) -> None:
    caller = identify(((callers.ENGINE_KEY_HEADER, presented),), engine_keys=engines, service_keys=("k" * 40,))
    assert (caller.engine if caller is not None else None) == named
    assert caller is None or caller.kind == "engine"


@pytest.mark.parametrize(("engines", "presented", "named"), CASES)
async def test_the_gateway_gate_names_the_same_engine(
    engines: dict[str, tuple[str, ...]], presented: str, named: str | None
) -> None:
    if named is None:
        with pytest.raises(ApiError) as refused:
            await internal(_request(engines), x_internal_key=presented, authorization=None)
        assert refused.value.status == 401 and refused.value.code == "UNAUTHENTICATED"
    else:
        await internal(_request(engines), x_internal_key=presented, authorization=None)
        assert callers.current.get() == callers.Caller(kind="service", engine=named)


def test_an_engine_named_outright_wins_over_the_default_with_the_same_key(tmp_path) -> None:
    # OUTRIDER_INTERNAL_KEY is the key of the engine called `default`, added
    # after the engines OUTRIDER_ENGINE_KEYS names.
    settings = load(
        {
            "OUTRIDER_DATA_DIR": str(tmp_path),
            "OUTRIDER_INTERNAL_KEY": SHARED,
            "OUTRIDER_ENGINE_KEYS": f'{{"dispatch": "{SHARED}"}}',
        }
    )
    assert list(settings.engine_keys) == ["dispatch", "default"]
    assert engine_named(settings.engine_keys, SHARED) == "dispatch"


def test_every_key_is_compared_whichever_matches(monkeypatch: pytest.MonkeyPatch) -> None:
    engines = {"dispatch": (DISPATCH, DISPATCH_PREVIOUS), "support": (SUPPORT,), "blank": ("",)}
    compared: list[bytes] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        compared.append(b)
        return real(a, b)

    monkeypatch.setattr(callers.hmac, "compare_digest", counting)
    for presented in (DISPATCH, DISPATCH_PREVIOUS, SUPPORT, "wrong", ""):
        compared.clear()
        engine_named(engines, presented)
        assert sorted(compared) == sorted(key.encode() for keys in engines.values() for key in keys), presented


@pytest.mark.parametrize(
    ("gate", "headers", "named"),
    [
        pytest.param(internal, {"x_internal_key": DISPATCH}, "dispatch", id="internal, X-Internal-Key"),
        pytest.param(internal, {"authorization": f"Bearer {DISPATCH}"}, None, id="internal, Bearer"),
        pytest.param(exporter, {"x_internal_key": DISPATCH}, "dispatch", id="exporter, X-Internal-Key"),
        pytest.param(exporter, {"authorization": f"Bearer {DISPATCH}"}, "dispatch", id="exporter, Bearer"),
        pytest.param(exporter, {"authorization": f"bearer  {DISPATCH} "}, "dispatch", id="exporter, bearer spaced"),
        pytest.param(exporter, {"authorization": DISPATCH}, None, id="exporter, no Bearer prefix"),
        pytest.param(scraper, {"authorization": f"Bearer {DISPATCH}"}, "dispatch", id="scraper, Bearer"),
        pytest.param(
            scraper,
            {"x_internal_key": "wrong", "authorization": f"Bearer {DISPATCH}"},
            None,
            id="scraper, a wrong X-Internal-Key is not rescued by Bearer",
        ),
        pytest.param(
            scraper,
            {"x_internal_key": "", "authorization": f"Bearer {DISPATCH}"},
            "dispatch",
            id="scraper, empty X-Internal-Key",
        ),
    ],
)
async def test_where_each_gate_reads_the_key(gate: EngineGate, headers: dict[str, str], named: str | None) -> None:
    sent = {"x_internal_key": None, "authorization": None, **headers}
    request = _request({"dispatch": (DISPATCH,)})
    if named is None:
        with pytest.raises(ApiError, match=re.escape(gate.refusal)):
            await gate(request, **sent)
    else:
        await gate(request, **sent)
        assert callers.engine_name() == named


def test_every_engine_route_is_behind_the_one_gate(tmp_path) -> None:
    app = create_app(load({"OUTRIDER_DATA_DIR": str(tmp_path)}))
    # Included routers sit nested in app.routes; iter_route_contexts walks
    # the routes as they are served.
    gated = {
        (method, served.path): [
            dependency.call for dependency in _dependencies(route) if isinstance(dependency.call, EngineGate)
        ]
        for served in iter_route_contexts(app.routes)
        if isinstance(route := served.original_route, APIRoute)
        for method in route.methods
    }
    engine_routes = {
        (method, path) for method, path in gated if path.startswith("/internal/") or path in ("/metrics", "/v1/traces")
    }
    assert len(engine_routes) > 10
    assert {route: gates for route, gates in gated.items() if route in engine_routes and len(gates) != 1} == {}
    assert {route: gates for route, gates in gated.items() if route not in engine_routes and gates} == {}
    assert gated["POST", "/v1/traces"] == [exporter] and gated["GET", "/metrics"] == [scraper]


def _dependencies(route: APIRoute) -> list:
    found, pending = [], list(route.dependant.dependencies)
    while pending:
        dependency = pending.pop()
        found.append(dependency)
        pending += dependency.dependencies
    return found


def _request(engines: dict[str, tuple[str, ...]]) -> SimpleNamespace:
    return SimpleNamespace(app=SimpleNamespace(state=SimpleNamespace(settings=SimpleNamespace(engine_keys=engines))))
