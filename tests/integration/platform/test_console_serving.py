"""The gateway serves the console: index.html for every console path, hashed
assets cached for good (gzipped when asked), nothing outside the bundle."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from gateway import console


def client_for(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")


@pytest.fixture
def bundle(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text('<script type="module" src="/console/assets/index-abc.js"></script>')
    (tmp_path / "assets" / "index-abc.js").write_text("console.log('outrider');" * 50)
    (tmp_path.parent / "secret.txt").write_text("not for the browser")
    app = FastAPI()
    console.mount(app, tmp_path)
    return app


async def test_every_console_path_answers_the_page_with_its_policy(bundle):
    async with client_for(bundle) as client:
        for path in ("/console/", "/console/agents/EXCEPTION_AGENT", "/console/decisions/x?outcome=failure"):
            page = await client.get(path)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            assert page.headers["cache-control"] == "no-cache"
            assert "script-src 'self'" in page.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        for bare in ("/", "/console"):
            moved = await client.get(bare)
            assert moved.status_code == 307 and moved.headers["location"] == "/console/"


async def test_assets_are_immutable_and_gzipped_when_the_browser_accepts_it(bundle):
    async with client_for(bundle) as client:
        plain = await client.get("/console/assets/index-abc.js", headers={"Accept-Encoding": "identity"})
        packed = await client.get("/console/assets/index-abc.js", headers={"Accept-Encoding": "gzip, br"})
    assert plain.status_code == 200 and "immutable" in plain.headers["cache-control"]
    assert "javascript" in plain.headers["content-type"] and "content-encoding" not in plain.headers
    assert packed.headers["content-encoding"] == "gzip" and packed.headers["vary"] == "Accept-Encoding"
    assert "javascript" in packed.headers["content-type"]
    # httpx undoes the encoding, so the body read is the script itself.
    assert packed.content == plain.content
    assert int(packed.headers["content-length"]) < len(plain.content) / 5


async def test_a_missing_asset_or_a_path_out_of_the_bundle_is_404_never_the_page(bundle):
    async with client_for(bundle) as client:
        gone = await client.get("/console/assets/index-old.js")
        escape = await client.get("/console/assets/..%2F..%2Fsecret.txt")
        dotted = await client.get("/console/assets/../../secret.txt")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "NOT_FOUND"
    assert escape.status_code == 404 and "not for the browser" not in escape.text
    assert "not for the browser" not in dotted.text


async def test_without_a_built_bundle_the_console_says_how_to_build_it(tmp_path):
    app = FastAPI()
    console.mount(app, tmp_path / "nothing")
    async with client_for(app) as client:
        reply = await client.get("/console/agents")
    assert reply.status_code == 503 and reply.json()["error"]["code"] == "CONSOLE_NOT_BUILT"
    assert "make console" in reply.json()["error"]["message"]


async def test_the_gateway_mounts_the_committed_bundle():
    assert (console.DIST / "index.html").is_file()
    assert console.sign_in_link("0.0.0.0", 8080, "t.o.k") == "http://127.0.0.1:8080/console/#token=t.o.k"
    assert console.sign_in_link("::1", 9000, "x") == "http://[::1]:9000/console/#token=x"
