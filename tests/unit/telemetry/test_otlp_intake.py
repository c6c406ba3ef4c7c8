"""The gateway's OTLP intake publishes each message with an id derived from
its bytes, and retries a lost acknowledgement with that id, inside the
exporters' timeout."""

from __future__ import annotations

import nats.errors

from gateway.intake import PUBLISH_RETRY, Intake, message_id
from services.common.settings import load
from services.telemetry.otlp import codec as otlp_codec
from tests.unit.telemetry.test_otlp_codec import chat, export, root

SECRETS = {"OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40}
# The OTLP exporters' default export timeout.
EXPORTER_TIMEOUT_S = 10.0


class AckLostOnce:
    """A stream whose first acknowledgement is lost, as when a server dies
    holding it; it records the id every attempt carried."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    async def publish(self, subject, payload, *, timeout, headers):
        self.ids.append(headers["Nats-Msg-Id"])
        if len(self.ids) == 1:
            raise nats.errors.TimeoutError
        return "ack"


class IntakeOn(Intake):
    """The intake publishing to a given stream instead of connecting."""

    def __init__(self, js: AckLostOnce, tmp_path) -> None:
        super().__init__(load({**SECRETS, "OUTRIDER_DATA_DIR": str(tmp_path)}))
        self.js = js

    async def _jetstream(self):
        return self.js


def test_the_same_spans_pack_into_the_same_id_and_other_spans_into_another():
    [first] = otlp_codec.admit(export(root(), chat())).messages
    [again] = otlp_codec.admit(
        otlp_codec.decode_request(export(root(), chat()).SerializeToString(), json_encoded=False)
    ).messages
    [other] = otlp_codec.admit(export(root(), chat(3))).messages
    assert message_id(first) == message_id(again)
    assert message_id(first) != message_id(other)
    assert message_id(first).startswith("otlp:")


def test_every_retry_ends_before_an_exporter_gives_up():
    assert PUBLISH_RETRY.attempts > 1
    assert PUBLISH_RETRY.longest_s() < EXPORTER_TIMEOUT_S


async def test_a_lost_acknowledgement_is_retried_with_the_message_id(tmp_path):
    [message] = otlp_codec.admit(export(root(), chat())).messages
    js = AckLostOnce()
    await IntakeOn(js, tmp_path).publish([message])
    assert js.ids == [message_id(message), message_id(message)]
