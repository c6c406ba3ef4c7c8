import grpc
import pytest

from services.common.clients import ContextCallError
from services.outcomes import clients


def rpc_error(code: grpc.StatusCode) -> ContextCallError:
    return ContextCallError(
        "decisions", grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=code.name)
    )


class Flaky:
    """A call that fails with the given codes, in order, then answers."""

    def __init__(self, *codes: grpc.StatusCode) -> None:
        self.codes = list(codes)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.codes:
            raise rpc_error(self.codes.pop(0))
        return "reply"


async def test_a_dropped_connection_or_an_aborted_call_is_retried(monkeypatch):
    monkeypatch.setattr(clients, "RETRY_BASE_S", 0.0)
    call = Flaky(grpc.StatusCode.ABORTED, grpc.StatusCode.UNAVAILABLE)
    assert await clients.retrying(call, what="SetOutcomes") == "reply"
    assert call.calls == 3


async def test_a_refusal_is_not_retried_and_retries_run_out(monkeypatch):
    monkeypatch.setattr(clients, "RETRY_BASE_S", 0.0)
    refused = Flaky(grpc.StatusCode.INVALID_ARGUMENT)
    broken = Flaky(grpc.StatusCode.INTERNAL)
    with pytest.raises(ContextCallError):
        await clients.retrying(broken, what="SetOutcomes")
    assert broken.calls == 1
    with pytest.raises(ContextCallError) as caught:
        await clients.retrying(refused, what="SetOutcomes")
    assert caught.value.status == grpc.StatusCode.INVALID_ARGUMENT and refused.calls == 1
    down = Flaky(*[grpc.StatusCode.UNAVAILABLE] * clients.RETRY_ATTEMPTS)
    with pytest.raises(ContextCallError):
        await clients.retrying(down, what="ListPending")
    assert down.calls == clients.RETRY_ATTEMPTS
