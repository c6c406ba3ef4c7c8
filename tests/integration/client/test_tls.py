"""gRPC over TLS: an engine that trusts the platform's CA reads its registry
and records decisions; a plaintext client or an untrusted server certificate
gets nothing; with client certificates required, only a client holding one
signed by the CA is served. The gateway reaches TLS contexts by itself."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
import trustme

from outrider.client import DecisionRecorder, RegistryClient, TlsFiles
from outrider.rpc import keyed_channel
from outrider.v1 import registry_pb2, registry_pb2_grpc
from services.common.settings import SettingsError
from tests.harness import INTERNAL_KEY, bearer, gateway_client, make_settings, running


def _pem(blob: trustme.Blob, path: Path) -> Path:
    blob.write_to_path(str(path))
    return path


@pytest.fixture
def pki(tmp_path):
    authority, stranger = trustme.CA(), trustme.CA()
    served = authority.issue_cert("127.0.0.1", "localhost")
    client = authority.issue_cert("dispatch-engine")
    foreign_client = stranger.issue_cert("dispatch-engine")
    return {
        "ca": _pem(authority.cert_pem, tmp_path / "ca.pem"),
        "stranger_ca": _pem(stranger.cert_pem, tmp_path / "stranger-ca.pem"),
        "cert": _pem(served.cert_chain_pems[0], tmp_path / "server.pem"),
        "key": _pem(served.private_key_pem, tmp_path / "server-key.pem"),
        "client_cert": _pem(client.cert_chain_pems[0], tmp_path / "client.pem"),
        "client_key": _pem(client.private_key_pem, tmp_path / "client-key.pem"),
        "foreign_cert": _pem(foreign_client.cert_chain_pems[0], tmp_path / "foreign.pem"),
        "foreign_key": _pem(foreign_client.private_key_pem, tmp_path / "foreign-key.pem"),
    }


def _tls_settings(template, database, pki, *, client_auth: bool):
    return make_settings(
        template,
        database,
        OUTRIDER_GRPC_TLS_CERT=str(pki["cert"]),
        OUTRIDER_GRPC_TLS_KEY=str(pki["key"]),
        OUTRIDER_GRPC_TLS_CA=str(pki["ca"]),
        OUTRIDER_GRPC_TLS_CLIENT_AUTH="true" if client_auth else "false",
    )


async def _snapshot_with(address: str, tls: TlsFiles | None) -> grpc.StatusCode | None:
    """None when the registry answered, else the status the call ended with."""
    async with keyed_channel(address, INTERNAL_KEY, tls=tls) as channel:
        try:
            await registry_pb2_grpc.RegistryStub(channel).GetSnapshot(registry_pb2.GetSnapshotRequest(), timeout=3)
        except grpc.aio.AioRpcError as error:
            return error.code()
    return None


async def test_an_engine_trusting_the_ca_is_served_and_plaintext_or_a_wrong_ca_is_not(template, database, pki):
    settings = _tls_settings(template, database, pki, client_auth=False)
    async with running(settings, ["registry", "decisions"]):
        address = settings.addr("registry")
        assert await _snapshot_with(address, TlsFiles(ca=pki["ca"])) is None
        assert await _snapshot_with(address, None) == grpc.StatusCode.UNAVAILABLE
        assert await _snapshot_with(address, TlsFiles(ca=pki["stranger_ca"])) == grpc.StatusCode.UNAVAILABLE

        registry = RegistryClient(address, INTERNAL_KEY, tls=TlsFiles(ca=pki["ca"]))
        await registry.start()
        try:
            snapshot = await registry.wait_for_snapshot(timeout=15)
            assert snapshot is not None and registry.connected
        finally:
            await registry.close()

        recorder = DecisionRecorder(settings.addr("decisions"), INTERNAL_KEY, tls=TlsFiles(ca=pki["ca"]))
        recorder.record(
            decision_type="stall_response",
            agent_id="EXCEPTION_AGENT",
            subject_id="BK-TLS",
            action="reassign",
            confidence=0.8,
            context={"stall_minutes": 14},
            model="m",
        )
        assert await recorder.flush(timeout_s=15)
        await recorder.close()
        assert recorder.counters.sent == 1 and not recorder.counters.dropped

        async with gateway_client(settings) as api:
            listed = await api.get("/admin/ai/decisions", params={"subject_id": "BK-TLS"}, headers=bearer(role=3))
        assert listed.status_code == 200, listed.text
        assert [item["subject_id"] for item in listed.json()["items"]] == ["BK-TLS"]


async def test_with_client_certificates_required_only_the_cas_clients_are_served(template, database, pki):
    settings = _tls_settings(template, database, pki, client_auth=True)
    async with running(settings, ["registry"]):
        address = settings.addr("registry")
        assert await _snapshot_with(address, TlsFiles(ca=pki["ca"])) == grpc.StatusCode.UNAVAILABLE
        foreign = TlsFiles(ca=pki["ca"], cert=pki["foreign_cert"], key=pki["foreign_key"])
        assert await _snapshot_with(address, foreign) == grpc.StatusCode.UNAVAILABLE
        own = TlsFiles(ca=pki["ca"], cert=pki["client_cert"], key=pki["client_key"])
        assert await _snapshot_with(address, own) is None

        # The gateway presents the platform's own certificate.
        async with gateway_client(settings) as api:
            agents = await api.get("/admin/ai/agents", headers=bearer(role=3))
        assert agents.status_code == 200, agents.text


async def test_the_tls_settings_come_as_a_pair_and_client_auth_needs_a_ca(template, database, pki):
    with pytest.raises(SettingsError, match="OUTRIDER_GRPC_TLS_CERT and OUTRIDER_GRPC_TLS_KEY"):
        make_settings(template, database, OUTRIDER_GRPC_TLS_CERT=str(pki["cert"]))
    with pytest.raises(SettingsError, match="OUTRIDER_GRPC_TLS_CLIENT_AUTH needs OUTRIDER_GRPC_TLS_CA"):
        make_settings(
            template,
            database,
            OUTRIDER_GRPC_TLS_CERT=str(pki["cert"]),
            OUTRIDER_GRPC_TLS_KEY=str(pki["key"]),
            OUTRIDER_GRPC_TLS_CLIENT_AUTH="true",
        )
