"""The pure parts of `outrider backup` and `outrider restore`: where libpq's
tools are pointed, and what an archive's listing and version tables say."""

from __future__ import annotations

import pytest

from launcher.backup import (
    Holdings,
    archive_revisions,
    archive_tables,
    libpq_environment,
    newer_than_this_version,
)


def test_a_tcp_url_becomes_libpq_variables_with_the_password_off_the_command_line():
    assert libpq_environment("postgresql+asyncpg://outrider:s3cr%40t@db.internal:6432/outrider?ssl=require") == {
        "PGHOST": "db.internal",
        "PGPORT": "6432",
        "PGUSER": "outrider",
        "PGPASSWORD": "s3cr@t",
        "PGDATABASE": "outrider",
        "PGSSLMODE": "require",
    }


def test_a_unix_socket_url_names_the_socket_directory_as_the_host():
    assert libpq_environment("postgresql+asyncpg://postgres@/outrider?host=/run/pg&port=5433") == {
        "PGHOST": "/run/pg",
        "PGPORT": "5433",
        "PGUSER": "postgres",
        "PGDATABASE": "outrider",
    }


@pytest.mark.parametrize(("ssl", "mode"), [("true", "require"), ("false", "disable"), ("verify-full", "verify-full")])
def test_asyncpgs_ssl_words_become_libpqs(ssl, mode):
    assert libpq_environment(f"postgresql+asyncpg://u@h/db?ssl={ssl}")["PGSSLMODE"] == mode


LISTING = """;
; Archive created at 2026-09-29 15:27:00 UTC
;
221; 1259 16486 TABLE registry alembic_version postgres
2928; 0 16597 TABLE DATA decisions alembic_version postgres
2929; 0 16602 TABLE DATA decisions decisions postgres
2614; 2604 16626 DEFAULT decisions outcome_history id postgres
2950; 0 16486 TABLE DATA registry audit postgres
2962; 0 0 SEQUENCE SET registry audit_id_seq postgres
"""


def test_the_listing_names_each_table_whose_rows_the_archive_holds():
    assert archive_tables(LISTING) == ["decisions.alembic_version", "decisions.decisions", "registry.audit"]


def test_the_version_tables_say_each_schemas_revision():
    script = "\n".join(
        [
            "SET statement_timeout = 0;",
            "COPY decisions.alembic_version (version_num) FROM stdin;",
            "decisions_0002",
            "\\.",
            "",
            "COPY registry.alembic_version (version_num) FROM stdin;",
            "registry_0002",
            "\\.",
        ]
    )
    assert archive_revisions(script) == {"decisions": "decisions_0002", "registry": "registry_0002"}


def test_only_a_revision_this_version_does_not_ship_is_newer():
    assert newer_than_this_version({"registry": "registry_0001", "decisions": "decisions_0003"}) == []
    assert newer_than_this_version({"registry": "registry_0001", "telemetry": "telemetry_9999"}) == [
        "telemetry at telemetry_9999"
    ]


def test_a_target_is_empty_when_only_alembics_versions_are_there():
    migrated = Holdings({"registry": {"alembic_version": 1, "agents": 0}, "decisions": {"alembic_version": 1}})
    assert migrated.empty
    held = Holdings({"registry": {"alembic_version": 1, "agents": 4, "tools": 9, "skills": 2, "audit": 1}})
    assert not held.empty
    assert held.described() == "registry 16 rows (tools 9, agents 4, skills 2, …)"
    assert held.tables == 5
