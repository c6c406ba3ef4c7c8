"""Playground redaction: how much it lets through, how much it hides by
mistake, and how long it takes on a tool result.

    python -m bench.playground.bench_redaction                  # 20,000 documents, 30 timing rounds
    python -m bench.playground.bench_redaction --size 500 --rounds 3   # smoke

Accuracy: seeded random JSON documents (tests/unit/playground/planted.py)
with personal values of every kind planted as values, keys, numbers and
inside sentences, beside harmless ones (ids, amounts, timestamps, booking
codes, zones, UUIDs, ETAs). A planted value leaks when any of its probes
(the value as written, its bare digits, four-decimal coordinates, each word
of a name) appears in the output; a harmless value is wrongly redacted when
it does not come back unchanged. The sample is measured twice: as planted,
and with every personal value written to walk around a pattern (full-width,
Devanagari or Bengali digits, zero-width characters, no-break spaces, dots
and separator runs between digit groups, one digit at a time, "[at]" and
"at" for "@", a Cyrillic or Greek look-alike letter in a name).

Speed: one fresh Redactor per call, as one run's first tool result gets,
on the demo backend's records cut to 16 KB of JSON, the same 16 KB as one
string, and a 214 KB result of 5,000 rows; next to json.dumps of the same
value, which every result pays anyway; the same string with every digit
full-width, which no character of takes the plain-ASCII path; and the
preview a consumer logs of a 1 MiB bad message. Medians over rounds, side
by side in one process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from launcher.demo.backend import build_world
from services.common.redaction.preview import preview
from services.common.redaction.redactor import Redactor
from services.playground.redaction import DEFAULT_RESULT_LIMIT
from tests.unit.playground.planted import Verdict, judge, planted_document


def accuracy(size: int, seed: int, *, obfuscate: bool = False) -> Verdict:
    rng = random.Random(seed)
    verdict = Verdict()
    for _ in range(size):
        planted = planted_document(rng, size=rng.randrange(4, 16), obfuscate=obfuscate)
        judge(planted, Redactor().value(planted.document), verdict)
    return verdict


def median_ms(work: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def payloads() -> dict[str, Any]:
    _, bookings = build_world()
    rows = [asdict(b) for b in bookings]
    while len(json.dumps({"items": rows}).encode()) > DEFAULT_RESULT_LIMIT:
        rows.pop()
    records = {"items": rows}
    text = json.dumps(records)
    # Every digit full-width: no character of the text is plain ASCII's fast path.
    wide = "".join(chr(ord(char) + 0xFEE0) if char.isdigit() else char for char in text)
    return {
        f"demo bookings, {len(rows)} rows ({len(text.encode()) // 1024} KB JSON)": records,
        f"the same as one string ({len(text.encode()) // 1024} KB text)": text,
        "5,000 small rows (214 KB JSON)": {"rows": [{"booking_id": i, "status": "waiting"} for i in range(5000)]},
        "the same string, every digit full-width": wide,
    }


def report(title: str, verdict: Verdict) -> None:
    print(f"\n{title}")
    print(f"  planted personal values: {verdict.planted}, leaked: {len(verdict.leaked)}")
    for kind, count in sorted(verdict.planted_by_kind.items()):
        print(f"    {kind:<10} {count:>6} planted, {verdict.leaked_by_kind[kind]} leaked")
    wrong = len(verdict.harmed)
    print(f"  harmless values: {verdict.harmless}, wrongly redacted: {wrong} ({100 * wrong / verdict.harmless:.3f}%)")
    by_place = Counter(place for place, _ in verdict.harmed)
    print(f"    by place: {dict(by_place)}")
    for (place, value), count in Counter((p, str(v)) for p, v in verdict.harmed).most_common(8):
        print(f"    {count:>3} x {place}: {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=20000, help="documents in the accuracy sample")
    parser.add_argument("--rounds", type=int, default=30, help="timing rounds per payload")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")

    report(f"accuracy over {args.size} documents (seed {args.seed})", accuracy(args.size, args.seed))
    report(
        f"accuracy over {args.size} documents, every personal value obfuscated (seed {args.seed})",
        accuracy(args.size, args.seed, obfuscate=True),
    )

    print(f"\nspeed, median of {args.rounds} rounds")
    print(f"  {'payload':<48} {'redact ms':>10} {'json.dumps ms':>14} {'ratio':>7}")
    for name, payload in payloads().items():
        redact_ms = median_ms(lambda p=payload: Redactor().value(p), args.rounds)
        dumps_ms = median_ms(lambda p=payload: json.dumps(p, ensure_ascii=False), args.rounds)
        print(f"  {name:<48} {redact_ms:>10.2f} {dumps_ms:>14.3f} {redact_ms / dumps_ms:>7.0f}")
    poison = json.dumps({"customer_phone": "+91 98450 12345", "note": "x" * (1024 * 1024)}).encode()
    shown_ms = median_ms(lambda: preview(poison, 512), args.rounds)
    print(f"  {'a 512-character preview of a 1 MiB bad message':<48} {shown_ms:>10.2f}")


if __name__ == "__main__":
    main()
