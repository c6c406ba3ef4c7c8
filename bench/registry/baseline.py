"""The baselines the registry is measured against, each a process of its own:

    python -m bench.registry.baseline http PORT    a bare FastAPI route returning a constant
    python -m bench.registry.baseline grpc PORT    a bare grpc.aio echo method, no interceptor

Served exactly as the real ones are (uvicorn with the gateway's options; a
grpc.aio server), so a ratio measures the registry's own work and nothing else.
"""

from __future__ import annotations

import asyncio
import sys

ECHO_METHOD = "/bench.Echo/Echo"


def serve_http(port: int) -> None:
    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()

    @app.get("/constant")
    async def constant() -> dict[str, bool]:
        return {"ok": True}

    # The gateway's own protocol and options (its head timeout and connection
    # cap among them), read from the same environment the gateway is given:
    # a baseline served more simply would charge those to the registry.
    from gateway.serving import uvicorn_options
    from services.common.settings import load

    uvicorn.run(app, host="127.0.0.1", port=port, **uvicorn_options(load()))


async def serve_grpc(port: int) -> None:
    import grpc

    from outrider.v1 import registry_pb2

    async def echo(request: registry_pb2.GetSnapshotRequest, context: grpc.aio.ServicerContext) -> object:
        return request

    server = grpc.aio.server()
    # The same message type both ways as the call it is compared with, so
    # both sides pay the same protobuf cost and only the servicer differs.
    handler = grpc.unary_unary_rpc_method_handler(
        echo,
        request_deserializer=registry_pb2.GetSnapshotRequest.FromString,
        response_serializer=registry_pb2.GetSnapshotRequest.SerializeToString,
    )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("bench.Echo", {"Echo": handler}),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    kind, port_text = sys.argv[1], sys.argv[2]
    if kind == "http":
        serve_http(int(port_text))
    elif kind == "grpc":
        asyncio.run(serve_grpc(int(port_text)))
    else:
        raise SystemExit(f"unknown baseline {kind!r}; use http or grpc")
