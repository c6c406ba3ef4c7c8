"""OTLP traces as telemetry: spans in at the gateway's /v1/traces, task runs
and model calls out into the telemetry tables.

`rules` decides what a span becomes, `codec` is the only module that sees
OTLP's messages (the gateway's admission and the stream's messages), and
`ingest` is the consumer that writes them. The records and tables are the
telemetry context's own (`services.telemetry.rules`, `.store`).
"""
