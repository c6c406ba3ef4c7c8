"""Playground redaction: how much it lets through, how much it hides by
mistake, and how long it takes on a tool result.

    python -m bench.playground.bench_redaction                  # 20,000 documents, 30 timing rounds
    python -m bench.playground.bench_redaction --size 500 --rounds 3   # smoke
    python -m bench.playground.bench_redaction --before 38e6db8        # speed beside that commit's redactor

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
by side in one process. With --before, the Redactor of another commit
(read from git, its redaction module and the patterns it imports) is timed
on the same payloads in the same rounds, the two taking turns, so a change
of load on the machine weighs on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
import types
from collections import Counter
from collections.abc import Callable, Sequence
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


def medians_ms(works: Sequence[Callable[[], Any]], rounds: int) -> list[float]:
    """The median time of each work, the works taking turns in every round."""
    times: list[list[float]] = [[] for _ in works]
    for _ in range(rounds):
        for work, taken in zip(works, times, strict=True):
            started = time.perf_counter()
            work()
            taken.append(time.perf_counter() - started)
    return [statistics.median(taken) * 1000 for taken in times]


def redactor_at(commit: str) -> Callable[[], Any]:
    """The Redactor class as the commit had it, loaded beside today's.

    Before the redaction core moved to services/common it lived in the
    playground and imported only the standard library and its patterns
    module; no module of today's tree has that module's name, so the old
    one is registered under it."""
    modules = {}
    for name in ("services.playground.pii_patterns", "services.playground.redaction"):
        path = name.replace(".", "/") + ".py"
        source = subprocess.run(["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True)
        alias = name if name.endswith("pii_patterns") else f"bench_before_{commit}_redaction"
        module = types.ModuleType(alias)
        module.__file__ = f"{commit}:{path}"
        sys.modules[alias] = module
        exec(compile(source.stdout, module.__file__, "exec"), module.__dict__)
        modules[name] = module
    redactor: Callable[[], Any] = modules["services.playground.redaction"].Redactor
    return redactor


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
    parser.add_argument("--before", metavar="COMMIT", help="also time this commit's Redactor, turn about")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")

    report(f"accuracy over {args.size} documents (seed {args.seed})", accuracy(args.size, args.seed))
    report(
        f"accuracy over {args.size} documents, every personal value obfuscated (seed {args.seed})",
        accuracy(args.size, args.seed, obfuscate=True),
    )

    before = redactor_at(args.before) if args.before else None
    print(f"\nspeed, median of {args.rounds} rounds")
    print(f"  {'payload':<48} {'before ms':>10} {'redact ms':>10} {'json.dumps ms':>14} {'ratio':>7}")
    for name, payload in payloads().items():
        works = [lambda p=payload: Redactor().value(p), lambda p=payload: json.dumps(p, ensure_ascii=False)]
        if before is not None:
            works.append(lambda p=payload: before().value(p))
        redact_ms, dumps_ms, *before_ms = medians_ms(works, args.rounds)
        shown_before = f"{before_ms[0]:>10.2f}" if before_ms else f"{'-':>10}"
        print(f"  {name:<48} {shown_before} {redact_ms:>10.2f} {dumps_ms:>14.3f} {redact_ms / dumps_ms:>7.0f}")
    poison = json.dumps({"customer_phone": "+91 98450 12345", "note": "x" * (1024 * 1024)}).encode()
    [shown_ms] = medians_ms([lambda: preview(poison, 512)], args.rounds)
    print(f"  {'a 512-character preview of a 1 MiB bad message':<48} {'-':>10} {shown_ms:>10.2f}")


if __name__ == "__main__":
    main()
