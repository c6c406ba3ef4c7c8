import pytest
from nats.aio.msg import Msg

from services.common.settings import SettingsError, load
from services.telemetry.ingest import MAX_BATCH_SIZE, IngestConfig, delivery_count


@pytest.fixture
def secrets(tmp_path) -> dict[str, str]:
    # Development settings: the secrets not given are generated under the data dir.
    return {"OUTRIDER_DATA_DIR": str(tmp_path), "OUTRIDER_JWT_SECRET": "j" * 40, "OUTRIDER_INTERNAL_KEY": "k" * 40}


def test_defaults_are_two_hundred_runs_or_two_seconds(secrets):
    config = IngestConfig.from_settings(load(secrets))
    assert (config.batch_size, config.batch_wait_s, config.ack_wait_s) == (200, 2.0, 30.0)


def test_settings_tune_the_batch(secrets):
    config = IngestConfig.from_settings(
        load(
            {
                **secrets,
                "OUTRIDER_TELEMETRY_BATCH_SIZE": "1000",
                "OUTRIDER_TELEMETRY_BATCH_WAIT_MS": "250",
                "OUTRIDER_TELEMETRY_ACK_WAIT_S": "10",
            }
        )
    )
    assert (config.batch_size, config.batch_wait_s, config.ack_wait_s) == (1000, 0.25, 10.0)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"batch_size": 0}, "OUTRIDER_TELEMETRY_BATCH_SIZE"),
        ({"batch_size": MAX_BATCH_SIZE + 1}, "OUTRIDER_TELEMETRY_BATCH_SIZE"),
        ({"batch_wait_s": 0.001}, "OUTRIDER_TELEMETRY_BATCH_WAIT_MS"),
        ({"batch_wait_s": 61}, "OUTRIDER_TELEMETRY_BATCH_WAIT_MS"),
        ({"batch_wait_s": 5, "ack_wait_s": 5}, "OUTRIDER_TELEMETRY_ACK_WAIT_S"),
    ],
)
def test_bad_values_are_refused_at_start_naming_the_variable(fields, named):
    with pytest.raises(SettingsError) as caught:
        IngestConfig(**fields)
    assert named in str(caught.value)


@pytest.mark.parametrize(
    "reply",
    [
        "$JS.ACK.TELEMETRY.telemetry-ingest.3.1042.977.1759170000000000000.12",
        "$JS.ACK._.ACCOUNTHASH.TELEMETRY.telemetry-ingest.3.1042.977.1759170000000000000.12.token",
        "$JS.ACK.hub.ACCOUNTHASH.TELEMETRY.telemetry-ingest.1.8.8.1759170000000000000.0",
    ],
)
def test_the_delivery_count_matches_the_client_library_reading(reply):
    msg = Msg(None, subject="telemetry.task", reply=reply, data=b"{}")
    assert delivery_count(msg) == msg.metadata.num_delivered
    assert delivery_count(msg) in (1, 3)
