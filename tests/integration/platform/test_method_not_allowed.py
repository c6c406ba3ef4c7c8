"""A method a path does not serve is answered 405 with every method it does serve."""

from __future__ import annotations

import re

from tests.harness import bearer, gateway_client

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


async def test_every_path_names_its_methods_in_allow(settings):
    async with gateway_client(settings) as client:
        document = (await client.get("/openapi.json")).json()
        answers = {}
        for template, operations in document["paths"].items():
            served = {method.upper() for method in operations}
            refused = next(method for method in METHODS if method not in served)
            path = re.sub(r"\{[^}]+\}", "00000000-0000-4000-8000-000000000001", template)
            reply = await client.request(refused, path, headers=bearer(role=1))
            answers[template] = (reply.status_code, reply.headers.get("allow"), reply.json()["error"]["code"])
    assert len(answers) > 30
    for template, operations in document["paths"].items():
        served = {method.upper() for method in operations}
        status, allow, code = answers[template]
        assert (status, code) == (405, "METHOD_NOT_ALLOWED"), template
        assert served <= set(allow.split(", ")) <= served | {"HEAD"}, (template, allow)
