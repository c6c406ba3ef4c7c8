import pytest

from services.common.redaction.redactor import RedactionRules, redact
from services.common.settings import ENV_VARS, SettingsError, load


def settings_with(tmp_path, **env):
    return load({"OUTRIDER_DATA_DIR": str(tmp_path), **env})


def test_no_extra_rules_by_default(tmp_path):
    settings = settings_with(tmp_path)

    assert settings.redact_keys == () and settings.redact_patterns == {}


def test_extra_key_words_and_patterns_are_read_and_applied(tmp_path):
    settings = settings_with(
        tmp_path,
        OUTRIDER_REDACT_KEYS=" guardian , next_of_kin,,",
        OUTRIDER_REDACT_PATTERNS='{"employee": "EMP-\\\\d{5}"}',
    )
    rules = RedactionRules.build(extra_keys=settings.redact_keys, extra_patterns=settings.redact_patterns)

    assert settings.redact_keys == ("guardian", "next_of_kin")
    assert settings.redact_patterns == {"employee": r"EMP-\d{5}"}
    assert redact({"guardian": "Asha", "text": "raised by EMP-12345"}, rules) == {
        "guardian": "<guardian#1>",
        "text": "raised by <employee#1>",
    }
    assert {"OUTRIDER_REDACT_KEYS", "OUTRIDER_REDACT_PATTERNS"} <= ENV_VARS


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("not json", "JSON object"),
        ('["EMP-\\\\d+"]', "JSON object"),
        ('{"employee": 5}', "JSON object"),
        ('{"Employee Id": "x"}', "lower-case"),
        ('{"employee": "(unclosed"}', "does not compile"),
    ],
)
def test_bad_patterns_stop_the_start(tmp_path, raw, message):
    with pytest.raises(SettingsError, match=message):
        settings_with(tmp_path, OUTRIDER_REDACT_PATTERNS=raw)
