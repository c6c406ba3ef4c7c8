"""Human-decision RPCs of the decisions servicer (subjects, inputs, lease)."""

from __future__ import annotations

from collections.abc import Mapping

import grpc
from sqlalchemy.ext.asyncio import AsyncEngine

from outrider.v1 import decisions_pb2
from services.common.errors import Unavailable
from services.common.settings import Settings, SettingsError
from services.decisions.human import codec, reconcile
from services.decisions.human.rules import HumanInputSource
from services.decisions.human.sources import build_sources


class HumanDecisionRpcs:
    """Mixed into DecisionsService; holds the human-decision half of the API.

    The class it is mixed into must set, in its __init__:
      self._engine    the AsyncEngine of the decisions schema;
      self._settings  the Settings, whose `human_sources` configures the feeds.
    It may also call `self.human_sources()` there, so a misconfigured source
    stops the context at start-up instead of refusing its first lease.
    """

    _engine: AsyncEngine
    _settings: Settings
    _human_sources: Mapping[str, HumanInputSource] | None = None

    def human_sources(self) -> Mapping[str, HumanInputSource]:
        """The configured sources, built once; raises SettingsError naming a bad entry."""
        if self._human_sources is None:
            self._human_sources = build_sources(self._settings.human_sources)
        return self._human_sources

    async def RegisterSubject(
        self,
        request: decisions_pb2.RegisterSubjectRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.RegisterSubjectRequest, decisions_pb2.Subject],
    ) -> decisions_pb2.Subject:
        row = await reconcile.register_subject(self._engine, codec.subject_from_proto(request))
        return codec.subject_to_proto(row)

    async def RecordHumanInput(
        self,
        request: decisions_pb2.RecordHumanInputRequest,
        context: grpc.aio.ServicerContext[
            decisions_pb2.RecordHumanInputRequest, decisions_pb2.RecordHumanInputResponse
        ],
    ) -> decisions_pb2.RecordHumanInputResponse:
        now = reconcile.utc_now()
        row, created = await reconcile.record_input(
            self._engine, codec.input_from_proto(request, now=now), clock=lambda: now
        )
        return codec.recorded_to_proto(row, created)

    async def LeaseSubject(
        self,
        request: decisions_pb2.LeaseSubjectRequest,
        context: grpc.aio.ServicerContext[decisions_pb2.LeaseSubjectRequest, decisions_pb2.LeaseSubjectResponse],
    ) -> decisions_pb2.LeaseSubjectResponse:
        subject_id = codec.lease_from_proto(request)
        try:
            sources = self.human_sources()
        except SettingsError as exc:
            # Failing closed: a source that cannot be read cannot be known empty.
            raise Unavailable(f"lease refused: {exc}", code="HUMAN_SOURCES_MISCONFIGURED") from None
        return codec.lease_to_proto(await reconcile.lease(self._engine, sources, subject_id))

    async def ListHumanDecisions(
        self,
        request: decisions_pb2.ListHumanDecisionsRequest,
        context: grpc.aio.ServicerContext[
            decisions_pb2.ListHumanDecisionsRequest, decisions_pb2.ListHumanDecisionsResponse
        ],
    ) -> decisions_pb2.ListHumanDecisionsResponse:
        rows, next_key = await reconcile.list_page(self._engine, codec.listing_from_proto(request))
        return codec.page_to_proto(rows, next_key)
