"""Asking Outrider which model to use for a decision, so the decision can
say what the router's choice was worth.

`ModelRouter.choose()` asks RecommendModel for a Thompson pick among the
candidates and answers a `ModelChoice`: the model, and its propensity (the
chance the router had of picking it). Handed to `DecisionRecorder.record()`
as `route=`, it stamps the decision's `model` and `model_propensity`, which
is what the off-policy estimate of a model pin weighs decisions by (DESIGN
§10). Without it an engine would have to copy both by hand and a decision
missing its propensity cannot be weighed at all.

Example::

    router = ModelRouter("outcomes:50053", internal_key)
    choice = await router.choose("stall_response", ["model-a", "model-b"])
    ... decide with choice.model ...
    recorder.record(decision_type="stall_response", ..., route=choice)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from outrider.errors import refusal
from outrider.rpc import TlsFiles, keyed_channel
from outrider.v1 import outcomes_pb2, outcomes_pb2_grpc


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The router's pick for one decision, and what it was worth."""

    model: str
    # The pick's probability under the Thompson draw: 0 < propensity <= 1.
    propensity: float
    # How many draws estimated the propensity.
    draws: int
    # Same seed and evidence, same pick.
    seed: int
    key: str


class ModelRouter:
    """RecommendModel, as an engine asks it for each decision."""

    def __init__(
        self,
        address: str,
        internal_key: str,
        *,
        call_timeout_s: float = 2.0,
        channel: grpc.aio.Channel | None = None,
        tls: TlsFiles | None = None,
    ) -> None:
        self._channel = channel or keyed_channel(address, internal_key, tls=tls)
        self._stub = outcomes_pb2_grpc.OutcomesStub(self._channel)
        self._call_timeout_s = call_timeout_s

    async def choose(self, decision_type: str, candidates: Sequence[str], *, seed: int | None = None) -> ModelChoice:
        """The model to use for one decision of `decision_type`, among `candidates`.

        Raises the typed OutriderError of a refusal (no candidates, a blank
        name) or of Outrider being unreachable: an engine then falls back to
        its own default model, and records the decision without a route.
        """
        request = outcomes_pb2.RecommendModelRequest(decision_type=decision_type, candidates=list(candidates))
        if seed is not None:
            request.seed = seed
        try:
            reply = await self._stub.RecommendModel(request, timeout=self._call_timeout_s)
        except grpc.aio.AioRpcError as error:
            raise refusal(error) from error
        return ModelChoice(
            model=reply.model,
            propensity=reply.propensity,
            draws=reply.propensity_draws,
            seed=reply.seed,
            key=reply.key,
        )

    async def close(self) -> None:
        await self._channel.close(None)
