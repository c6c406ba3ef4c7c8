"""The floor under the decisions process's CPU per precedent search.

    .venv/bin/python -m bench.decisions.bench_floor                 # 50,000 judged decisions, about 6 min
    .venv/bin/python -m bench.decisions.bench_floor --size 2000 --seconds 2 --rounds 1   # smoke run

bench_similar measures what the decisions process spends per search. This
measures what it could not spend less than, built from the parts it is made
of, side by side in one run with the same searches in flight throughout:

- stream: searches through the decisions context over the engine client's
  SearchPrecedents stream, bench_similar's "gRPC stream" (the decisions
  process's CPU per search);
- search without gRPC: what the servicer runs for each search
  (services.decisions.service.find_precedents: the request parsed, the plan,
  the statement over the context's own direct connections, the answer built
  and serialized), in a process of its own with nothing else in it, under
  uvloop as the context runs (that process's CPU per search);
- gRPC alone: a grpc.aio stream that echoes each search's tag back, with the
  servicer's shape (a reader task, a queue, a generator sending what it
  holds) and no work in between, one search per message each way (the echo
  server's CPU per search). An echo answers at once, so batching it as the
  stream does would send all searches in flight in one message; a real
  search's answer waits on Postgres, and at eight in flight the stream
  carries about 1.3 searches a message, so one a message is the nearer
  model, and the dearer one.

If the stream cost no more than its two parts, its CPU per search would be
their sum; what it costs above that is the two parts meeting in one event
loop.

The gateway's side, the same way:

- gateway: `POST /internal/agent-decisions/similar` on `outrider gateway`
  (the gateway process's CPU per search);
- HTTP alone: uvicorn, as the gateway runs it, serving a bare ASGI function
  that does the route's work and nothing else: the key compared, the body
  parsed, the search sent over the same precedent streams, the answer
  printed by the gateway's own `similar_body`. What it costs less than the
  gateway is FastAPI's request handling and the middleware.
"""

from __future__ import annotations

import argparse
import asyncio
import hmac
import json
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import psutil
import uvicorn

from bench.decisions.bench_similar import (
    INTERNAL_KEY,
    TYPES,
    Generator,
    KeepAliveClient,
    Query,
    Servers,
    bench_database,
    load,
)
from gateway.codec.decisions import similar_body
from outrider.client.decisions import PrecedentClient
from outrider.precedent_stream import PrecedentSearches
from outrider.rpc import keyed_channel
from outrider.v1 import decisions_pb2
from services.common.db import context_engine
from services.decisions.embedding import StructuredContextEmbedder
from services.decisions.precedent import JudgedCounts, PrecedentSearch
from services.decisions.server import SEARCH_CONNECTIONS, direct_connections
from services.decisions.service import find_precedents
from tests.harness import reserved_port

ROOT = Path(__file__).resolve().parents[2]
K = 10
ECHO_METHOD = "/bench.Floor/Echo"
TAG = struct.Struct("<Q")
# Before each measured phase: channels connected, plans and counts cached.
WARM_S = 2.0


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    # As `outrider serve` runs a context (launcher.cli), so the parts cost
    # what they cost there.
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _closed_loop(
    call: Callable[[int], Awaitable[None]], *, concurrency: int, seconds: float
) -> tuple[int, float]:
    """(calls, elapsed s): `concurrency` tasks calling back to back."""
    calls = 0

    async def worker(offset: int, stop: float) -> None:
        nonlocal calls
        i = offset
        while time.perf_counter() < stop:
            await call(i)
            calls += 1
            i += concurrency

    started = time.perf_counter()
    await asyncio.gather(*(worker(n, started + seconds) for n in range(concurrency)))
    return calls, time.perf_counter() - started


# ─── the search without gRPC (a child process) ─────────────────────────────


async def _search_alone(database_url: str, queries_file: str, *, concurrency: int, seconds: float) -> dict:
    asked = json.loads(await asyncio.to_thread(Path(queries_file).read_text))
    dimension = len(asked[0][1])
    # As the servicer gets them: serialized requests, parsed per search.
    requests = [
        decisions_pb2.FindSimilarRequest(decision_type=t, embedding=v, k=K).SerializeToString() for t, v in asked
    ]
    engine = context_engine(database_url, "decisions")
    connections = direct_connections(database_url, "decisions", purpose="search", size=SEARCH_CONNECTIONS)
    precedents = PrecedentSearch(connections, counts=JudgedCounts(engine))
    embedder = StructuredContextEmbedder(dimension)

    async def search(i: int) -> None:
        request = decisions_pb2.FindSimilarRequest.FromString(requests[i % len(requests)])
        answer = await find_precedents(request, dimension=dimension, embedder=embedder, precedents=precedents)
        answer.SerializeToString()

    try:
        await _closed_loop(search, concurrency=concurrency, seconds=WARM_S)
        before = _cpu_s()
        calls, elapsed = await _closed_loop(search, concurrency=concurrency, seconds=seconds)
        return {"searches": calls, "seconds": elapsed, "cpu_s": _cpu_s() - before}
    finally:
        await connections.close()
        await engine.dispose()


# ─── gRPC alone: the echo server (a child process) and its client ──────────


async def _echo(asked: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    tags: asyncio.Queue[bytes | None] = asyncio.Queue()

    async def read() -> None:
        try:
            async for tag in asked:
                tags.put_nowait(tag)
        finally:
            tags.put_nowait(None)

    reader = asyncio.create_task(read())
    try:
        while (tag := await tags.get()) is not None:
            yield tag
    finally:
        reader.cancel()


async def _serve_echo(port: int) -> None:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers(
        [grpc.method_handlers_generic_handler("bench.Floor", {"Echo": grpc.stream_stream_rpc_method_handler(_echo)})]
    )
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("serving", flush=True)
    await server.wait_for_termination()


class EchoClient:
    """Tags out over one stream, a message each, each search waiting for its own back."""

    def __init__(self, port: int) -> None:
        self._channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        self._outgoing: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._waiting: dict[bytes, asyncio.Future[None]] = {}
        self._call = self._channel.stream_stream(ECHO_METHOD)(self._messages())
        self._reader = asyncio.create_task(self._read())

    async def _messages(self) -> AsyncIterator[bytes]:
        while (tag := await self._outgoing.get()) is not None:
            yield tag

    async def _read(self) -> None:
        async for tag in self._call:
            self._waiting.pop(tag).set_result(None)

    async def ask(self, i: int) -> None:
        tag = TAG.pack(i)
        done = self._waiting[tag] = asyncio.get_running_loop().create_future()
        self._outgoing.put_nowait(tag)
        await done

    async def close(self) -> None:
        self._outgoing.put_nowait(None)
        self._call.cancel()
        self._reader.cancel()
        await self._channel.close()


# ─── HTTP alone: a bare ASGI function under uvicorn (a child process) ──────


def _bare_route(decisions_addr: str):
    held: dict[str, PrecedentSearches] = {}
    key = INTERNAL_KEY.encode()

    async def app(scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while (event := await receive())["type"] != "lifespan.shutdown":
                held["searches"] = PrecedentSearches(keyed_channel(decisions_addr, INTERNAL_KEY), streams=4)
                await send({"type": "lifespan.startup.complete"})
            await held["searches"].close()
            await send({"type": "lifespan.shutdown.complete"})
            return
        given = dict(scope["headers"]).get(b"x-internal-key", b"")
        body, more = b"", True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        if not hmac.compare_digest(given, key):
            status, out = 401, b"{}"
        else:
            asked = json.loads(body)
            answer = await held["searches"].search(
                decisions_pb2.FindSimilarRequest(
                    decision_type=asked["decision_type"], embedding=asked["embedding"], k=asked["k"]
                )
            )
            status, out = 200, similar_body(answer.found)
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(out)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": out})

    return app


# ─── the run ───────────────────────────────────────────────────────────────


def _child(kind: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "bench.decisions.bench_floor", "--child", kind, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


async def _measure_process(
    process: psutil.Process, call: Callable[[int], Awaitable[None]], *, concurrency: int, seconds: float
) -> dict:
    await _closed_loop(call, concurrency=concurrency, seconds=WARM_S)
    times = process.cpu_times()
    before = times.user + times.system
    calls, elapsed = await _closed_loop(call, concurrency=concurrency, seconds=seconds)
    times = process.cpu_times()
    return {"searches": calls, "seconds": elapsed, "cpu_s": times.user + times.system - before}


async def _listening(port: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on port {port}") from None
            await asyncio.sleep(0.2)
        else:
            writer.close()
            return


def _ms_per_search(phase: dict) -> float:
    return phase["cpu_s"] / max(1, phase["searches"]) * 1000


async def main(args: argparse.Namespace) -> None:
    workdir = Path(tempfile.mkdtemp(prefix="outrider-floor-"))
    server = Servers("", ROOT)
    echo_port, http_port = reserved_port(), reserved_port()
    echo = _child("echo", str(echo_port))
    http: subprocess.Popen | None = None
    try:
        async with bench_database(args, workdir) as (database_url, raw):
            gen = Generator(args.dimension, seed=20260929)
            gen.prepare(args.size)
            print(f"loading {args.size:,} judged decisions ...", flush=True)
            await load(raw, gen, args.size)
            queries = [Query(t, gen.vector(t)) for t, _ in TYPES for _ in range(20)]
            queries_file = workdir / "queries.json"
            queries_file.write_text(json.dumps([(q.decision_type, q.vector) for q in queries]))
            server.start(database_url, args.dimension, workdir)
            await server.wait_ready()
            http = _child("http", str(http_port), server.decisions_addr)
            await _listening(http_port)
            assert echo.stdout is not None and echo.stdout.readline().strip() == "serving"

            engine = PrecedentClient(server.decisions_addr, INTERNAL_KEY, timeout_s=30.0)
            echoes = EchoClient(echo_port)
            bodies = [
                json.dumps({"decision_type": q.decision_type, "embedding": q.vector, "k": K}).encode() for q in queries
            ]
            to_gateway = [KeepAliveClient(server.http_port) for _ in range(args.concurrency)]
            to_bare_route = [KeepAliveClient(http_port) for _ in range(args.concurrency)]

            def over_http(clients: list[KeepAliveClient]) -> Callable[[int], Awaitable[None]]:
                async def call(i: int) -> None:
                    status, body = await clients[i % len(clients)].post(
                        "/internal/agent-decisions/similar", bodies[i % len(bodies)]
                    )
                    if status != 200:
                        raise RuntimeError(f"answered {status}: {body[:200]!r}")

                return call

            async def via_stream(i: int) -> None:
                query = queries[i % len(queries)]
                answer = await engine.precedents(query.decision_type, k=K, embedding=query.vector)
                if not answer.available:
                    raise RuntimeError("the precedent stream answered nothing")

            rounds: list[dict[str, float]] = []
            try:
                for number in range(1, args.rounds + 1):
                    stream = await _measure_process(
                        psutil.Process(server.pids()["decisions"]),
                        via_stream,
                        concurrency=args.concurrency,
                        seconds=args.seconds,
                    )
                    alone = _child("search", database_url, str(queries_file), str(args.concurrency), str(args.seconds))
                    out, _ = await asyncio.to_thread(alone.communicate)
                    if alone.returncode:
                        raise RuntimeError(f"the search without gRPC failed ({alone.returncode})")
                    without_grpc = json.loads(out.strip().splitlines()[-1])
                    grpc_alone = await _measure_process(
                        psutil.Process(echo.pid), echoes.ask, concurrency=args.concurrency, seconds=args.seconds
                    )
                    gateway = await _measure_process(
                        psutil.Process(server.pids()["gateway"]),
                        over_http(to_gateway),
                        concurrency=args.concurrency,
                        seconds=args.seconds,
                    )
                    http_alone = await _measure_process(
                        psutil.Process(http.pid),
                        over_http(to_bare_route),
                        concurrency=args.concurrency,
                        seconds=args.seconds,
                    )
                    row = {
                        "stream": _ms_per_search(stream),
                        "without gRPC": _ms_per_search(without_grpc),
                        "gRPC alone": _ms_per_search(grpc_alone),
                        "gateway": _ms_per_search(gateway),
                        "HTTP alone": _ms_per_search(http_alone),
                        "stream q/s": stream["searches"] / stream["seconds"],
                        "without gRPC q/s": without_grpc["searches"] / without_grpc["seconds"],
                        "gateway q/s": gateway["searches"] / gateway["seconds"],
                        "HTTP alone q/s": http_alone["searches"] / http_alone["seconds"],
                    }
                    rounds.append(row)
                    print(f"round {number}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
            finally:
                await engine.close()
                await echoes.close()
                for client in to_gateway + to_bare_route:
                    client.close()
            print(report(args, rounds, os.getloadavg()[0]), flush=True)
    finally:
        server.stop()
        echo.kill()
        if http is not None:
            http.terminate()
            http.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)


def report(args: argparse.Namespace, rounds: list[dict[str, float]], load_average: float) -> str:
    def median(name: str) -> float:
        return statistics.median(row[name] for row in rounds)

    parts = median("without gRPC") + median("gRPC alone")
    return "\n".join(
        [
            f"## Floor at {args.size:,} judged decisions, {args.concurrency} searches in flight, "
            f"medians of {len(rounds)} rounds of {args.seconds:g} s (load average {load_average:.1f} after)",
            "",
            "| | CPU ms per search | searches/s |",
            "|---|---|---|",
            f"| stream, decisions process | {median('stream'):.3f} | {median('stream q/s'):.0f} |",
            f"| search without gRPC, its own process | {median('without gRPC'):.3f} "
            f"| {median('without gRPC q/s'):.0f} |",
            f"| gRPC alone, echo server, one search per message | {median('gRPC alone'):.3f} | |",
            f"| the two parts added | {parts:.3f} | |",
            f"| stream ÷ parts | {median('stream') / parts:.2f}× | |",
            f"| gateway, its process | {median('gateway'):.3f} | {median('gateway q/s'):.0f} |",
            f"| HTTP alone: uvicorn and a bare ASGI route, its process | {median('HTTP alone'):.3f} "
            f"| {median('HTTP alone q/s'):.0f} |",
        ]
    )


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=50_000, help="judged decisions to load (default 50,000)")
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--concurrency", type=int, default=8, help="searches in flight")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each measured phase")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the three phases")
    parser.add_argument("--database-url", default="", help="use this Postgres server instead of an embedded one")
    parser.add_argument("--shared-buffers", default="2GB", help="shared_buffers of the embedded Postgres")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.size < 100:
        parser.error("--size must be at least 100")
    return args


def _run_child(kind: str, *args: str) -> None:
    if kind == "http":
        port, decisions_addr = args
        # As `outrider gateway` runs the gateway (launcher.cli).
        uvicorn.run(
            _bare_route(decisions_addr),
            host="127.0.0.1",
            port=int(port),
            log_config=None,
            access_log=False,
            timeout_graceful_shutdown=5,
        )
        return
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        if kind == "echo":
            runner.run(_serve_echo(int(args[0])))
        else:
            database_url, queries_file, concurrency, seconds = args
            print(
                json.dumps(
                    runner.run(
                        _search_alone(database_url, queries_file, concurrency=int(concurrency), seconds=float(seconds))
                    )
                ),
                flush=True,
            )


if __name__ == "__main__":
    arguments = parse()
    if arguments.child:
        _run_child(*arguments.child)
    else:
        asyncio.run(main(arguments))
