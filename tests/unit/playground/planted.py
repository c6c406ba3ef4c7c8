"""Documents with personal values planted at random places beside harmless
ones, for the redaction's property tests and its accuracy measurement.

Everything is drawn from a random.Random, so hypothesis can drive it (through
st.randoms) and a plain script can replay a seeded sample of any size. The
checksums are computed here independently of the code under test.
"""

from __future__ import annotations

import ipaddress
import itertools
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

# --- personal values ---------------------------------------------------------------

LISTED_FIRST = (
    "Ananya",
    "Aarav",
    "Priya",
    "Ramesh",
    "Suresh",
    "Lakshmi",
    "Kavya",
    "Arjun",
    "Meera",
    "Rohan",
    "Imran",
    "Fatima",
    "Harpreet",
    "Venkatesh",
    "James",
    "Maria",
    "Wei",
    "Carlos",
    "Olivia",
    "Ahmed",
)
LISTED_LAST = (
    "Sharma",
    "Iyer",
    "Reddy",
    "Nair",
    "Rao",
    "Gupta",
    "Menon",
    "Kulkarni",
    "Banerjee",
    "Khan",
    "Singh",
    "Patel",
    "D'Souza",
    "Chen",
    "Garcia",
    "Smith",
    "Nguyen",
)
# Names no list holds: caught only by the key they sit under or an honorific.
UNLISTED = ("Tanmay Bhide", "Ojas Kelkar", "Yashoda Bhat", "Dinkar Pol", "Hrithik Ure")

STATES = ("KA", "MH", "DL", "TN", "TS", "KL", "GJ", "UP", "WB", "HR", "RJ", "AP")
UPI_HANDLES = ("okaxis", "oksbi", "okhdfcbank", "okicici", "ybl", "ibl", "axl", "paytm", "upi", "apl")
STREETS = ("Residency", "Church", "Brigade", "Hosur", "Old Airport", "80 Feet", "12th", "Link", "Station")
STREET_WORDS = ("Road", "Rd", "Main", "Cross", "Street", "Lane", "Marg")


def _dihedral(i: int, j: int) -> int:
    # Multiplication in the dihedral group D5, the table Verhoeff's check uses.
    if i < 5 and j < 5:
        return (i + j) % 5
    if i < 5:
        return 5 + (i + j - 5) % 5
    if j < 5:
        return 5 + (i - 5 - j) % 5
    return (i - j) % 5


_PERMUTATION = [list(range(10)), [1, 5, 7, 6, 2, 8, 3, 0, 9, 4]]
for _ in range(6):
    _PERMUTATION.append([_PERMUTATION[1][d] for d in _PERMUTATION[-1]])
_INVERSE = [next(j for j in range(10) if _dihedral(i, j) == 0) for i in range(10)]


def verhoeff_check_digit(digits: str) -> str:
    check = 0
    for position, digit in enumerate(reversed(digits)):
        check = _dihedral(check, _PERMUTATION[(position + 1) % 8][int(digit)])
    return str(_INVERSE[check])


def luhn_check_digit(digits: str) -> str:
    total = 0
    for position, digit in enumerate(reversed(digits)):
        value = int(digit)
        if position % 2 == 0:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return str(-total % 10)


@dataclass(frozen=True)
class Personal:
    kind: str
    written: str
    # Substrings none of which may appear anywhere in the output.
    probes: tuple[str, ...]
    # The same value as a JSON number, where it can be one.
    number: int | None = None
    # Names are probed as whole words, case-insensitively.
    words: bool = False
    # Only places that can recognise it: a name no list holds is found by
    # its key or an honorific, never loose in a string or as a key.
    loose: bool = True

    def leaked(self, output: str) -> list[str]:
        # Read as written and as it reads: full-width digits or a zero-width
        # space left in the output still show the value.
        texts = (output, plain(output))
        if self.words:
            return [
                p
                for p in self.probes
                if any(re.search(rf"(?<![^\W\d_]){re.escape(p)}(?![^\W\d_])", text, re.I) for text in texts)
            ]
        return [p for p in self.probes if any(p in text for text in texts)]


def plain(text: str) -> str:
    """Text as a reader sees it: compatibility forms folded, invisible
    characters dropped, every script's digits as ASCII. Written here apart
    from the code under test, so the judge does not share its mistakes."""
    folded = unicodedata.normalize("NFKC", text)
    kept = (char for char in folded if unicodedata.category(char) != "Cf")
    return "".join(char if unicodedata.decimal(char, None) is None else str(unicodedata.decimal(char)) for char in kept)


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _group(rng: random.Random, digits: str, sizes: tuple[int, ...]) -> str:
    sep = rng.choice((" ", "-", ""))
    parts, start = [], 0
    for size in sizes:
        parts.append(digits[start : start + size])
        start += size
    return sep.join(parts)


def name(rng: random.Random) -> Personal:
    first, last = rng.choice(LISTED_FIRST), rng.choice(LISTED_LAST)
    written = rng.choice((first, f"{first} {last}", f"{last}", f"{first} {last}".upper(), f"{first} {last}".lower()))
    return Personal("person", written, tuple(written.split()), words=True)


def unlisted_name(rng: random.Random) -> Personal:
    written = rng.choice(UNLISTED)
    return Personal("person", written, tuple(written.split()), words=True, loose=False)


def mobile(rng: random.Random) -> Personal:
    national = rng.choice("6789") + _digits(rng, 9)
    body = rng.choice(
        (
            national,
            f"{national[:5]} {national[5:]}",
            f"{national[:5]}-{national[5:]}",
            f"{national[:3]} {national[3:6]} {national[6:]}",
        )
    )
    prefix = rng.choice(("", "", "+91", "+91 ", "+91-", "(+91) ", "91", "91 ", "0", "0 "))
    number = int(national) if rng.random() < 0.5 else int("91" + national)
    return Personal("phone", prefix + body, (prefix + body, national), number=number)


def landline(rng: random.Random) -> Personal:
    std = rng.choice(("80", "11", "22", "44", "40", "33", "124", "484", "20"))
    subscriber = rng.choice("2345") + _digits(rng, 9 - len(std))
    written = rng.choice(
        (
            f"0{std}-{subscriber}",
            f"0{std} {subscriber[:4]} {subscriber[4:]}",
            f"(0{std}) {subscriber}",
            f"+91 {std} {subscriber[:4]} {subscriber[4:]}",
            f"+91-{std}-{subscriber}",
            f"0{std}{subscriber}",
        )
    )
    return Personal("phone", written, (written, std + subscriber))


def international(rng: random.Random) -> Personal:
    written = rng.choice(
        (
            f"+44 20 {_digits(rng, 4)} {_digits(rng, 4)}",
            f"+1{rng.choice('23456789')}{_digits(rng, 9)}",
            f"+1 ({rng.choice('2345')}{_digits(rng, 2)}) {_digits(rng, 3)}-{_digits(rng, 4)}",
            f"+65 {rng.choice('689')}{_digits(rng, 3)} {_digits(rng, 4)}",
            f"+971 50 {_digits(rng, 3)} {_digits(rng, 4)}",
            f"+49 30 {_digits(rng, 8)}",
            f"+33 1 {_digits(rng, 2)} {_digits(rng, 2)} {_digits(rng, 2)} {_digits(rng, 2)}",
            f"+61{rng.choice('234')}{_digits(rng, 8)}",
        )
    )
    return Personal("phone", written, (written, re.sub(r"\D", "", written)[2:]))


def email(rng: random.Random) -> Personal:
    first, last = rng.choice((*LISTED_FIRST, "ops", "rider", "cx")), rng.choice(LISTED_LAST).replace("'", "")
    local = rng.choice(
        (
            f"{first}.{last}",
            f"{first}{rng.randrange(10, 999)}",
            f"{first[0]}{last}",
            f"{first}_{last}+orders",
            f"{rng.choice('6789')}{_digits(rng, 9)}",
        )
    )
    domain = rng.choice(("example.in", "gmail.com", "yahoo.co.in", "doormile.example", "mail.example.com"))
    written = f"{local}@{domain}"
    written = rng.choice((written, written.lower(), written.upper()))
    return Personal("email", written, (written, written.split("@")[0] + "@"))


def aadhaar(rng: random.Random) -> Personal:
    body = rng.choice("23456789") + _digits(rng, 10)
    digits = body + verhoeff_check_digit(body)
    written = _group(rng, digits, (4, 4, 4))
    return Personal("aadhaar", written, (written, digits), number=int(digits))


def pan(rng: random.Random) -> Personal:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    written = (
        "".join(rng.choice(letters) for _ in range(3))
        + rng.choice("PCHFATBLJG")
        + rng.choice(letters)
        + _digits(rng, 4)
        + rng.choice(letters)
    )
    return Personal("pan", written, (written,))


def ifsc(rng: random.Random) -> Personal:
    written = (
        rng.choice(("SBIN", "HDFC", "ICIC", "UTIB", "KKBK", "PUNB", "CNRB"))
        + "0"
        + "".join(rng.choice("0123456789ABCDEF") for _ in range(6))
    )
    return Personal("ifsc", written, (written,))


def upi(rng: random.Random) -> Personal:
    local = rng.choice(
        (
            f"{rng.choice(LISTED_FIRST).lower()}.{rng.randrange(1, 99)}",
            rng.choice("6789") + _digits(rng, 9),
            rng.choice(LISTED_LAST).lower().replace("'", ""),
        )
    )
    written = f"{local}@{rng.choice(UPI_HANDLES)}"
    return Personal("upi", written, (written,))


def vehicle(rng: random.Random) -> Personal:
    series = "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(rng.choice((1, 2))))
    sep = rng.choice((" ", "-", ""))
    written = sep.join((rng.choice(STATES), f"{rng.randrange(1, 99):02d}", series, _digits(rng, 4)))
    return Personal("vehicle", written, (written, written.replace(" ", "").replace("-", "")))


def card(rng: random.Random) -> Personal:
    prefix, length = rng.choice(
        (("4", 16), ("51", 16), ("55", 16), ("60", 16), ("65", 16), ("81", 16), ("2221", 16), ("34", 15), ("37", 15))
    )
    body = prefix + _digits(rng, length - len(prefix) - 1)
    digits = body + luhn_check_digit(body)
    written = _group(rng, digits, (4, 6, 5) if length == 15 else (4, 4, 4, 4))
    return Personal("card", written, (written, digits), number=int(digits))


def ip(rng: random.Random) -> Personal:
    if rng.random() < 0.6:
        written = ".".join(
            str(o)
            for o in (
                rng.choice((11, 49, 103, 117, 157, 182, 203)),
                rng.randrange(256),
                rng.randrange(256),
                rng.randrange(1, 255),
            )
        )
    else:
        written = str(ipaddress.IPv6Address((0x2401 << 112) | rng.getrandbits(100)))
    return Personal("ip", written, (written,))


def address(rng: random.Random) -> Personal:
    door = rng.choice(
        (
            f"{rng.randrange(1, 400)}",
            f"{rng.randrange(1, 60)}/{rng.randrange(1, 9)}",
            f"{rng.randrange(1, 400)}{rng.choice('ABC')}",
        )
    )
    street = f"{rng.choice(STREETS)} {rng.choice(STREET_WORDS)}"
    written = rng.choice((f"{door} {street}", f"{door}, {street}", f"Flat {door}", f"House No. {door}"))
    return Personal("address", written, (written,))


def coordinate(rng: random.Random) -> Personal:
    def exact(low: int, high: int) -> str:
        # Micro-degrees ending in a non-zero digit: exactly six places.
        micro = rng.randrange(low * 10**6, high * 10**6) // 10 * 10 + rng.randrange(1, 10)
        return f"{micro // 10**6}.{micro % 10**6:06d}"

    lat, lon = exact(8, 35), exact(68, 97)
    written = rng.choice((f"{lat},{lon}", f"{lat}, {lon}", f"lat: {lat}, lng: {lon}", f"@{lat},{lon}"))
    # Four places is about ten metres: no trace of them may survive.
    return Personal("coordinate", written, (lat[: lat.index(".") + 5], lon[: lon.index(".") + 5]))


PERSONAL: tuple[Callable[[random.Random], Personal], ...] = (
    name,
    unlisted_name,
    mobile,
    landline,
    international,
    email,
    aadhaar,
    pan,
    ifsc,
    upi,
    vehicle,
    card,
    ip,
    address,
    coordinate,
)

# --- the same values written to walk around a pattern --------------------------------

ZERO_WIDTH = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
# Separators between digit groups: no-break, thin and ideographic spaces,
# dots, runs of them.
SEPARATOR_RUNS = ("\u00a0", "\u202f", "\u2009", "\u3000", ".", " - ", "  ", ". ", "\u2013")
# Latin letters and a Cyrillic or Greek letter drawn like each.
LOOK_ALIKES = {
    "a": "\u0430",
    "c": "\u0441",
    "e": "\u0435",
    "o": "\u043e",
    "p": "\u0440",
    "x": "\u0445",
    "y": "\u0443",
    "i": "\u0456",
    "A": "\u0410",
    "B": "\u0412",
    "E": "\u0415",
    "H": "\u041d",
    "K": "\u041a",
    "M": "\u041c",
    "O": "\u041e",
    "P": "\u0420",
    "T": "\u0422",
    "X": "\u0425",
    "N": "\u039d",
    "Z": "\u0396",
}
_FULL_WIDTH = {chr(code): chr(code + 0xFEE0) for code in range(0x21, 0x7F)}
_DEVANAGARI = {str(d): chr(0x0966 + d) for d in range(10)}
_BENGALI = {str(d): chr(0x09E6 + d) for d in range(10)}
_ARABIC_INDIC = {str(d): chr(0x0660 + d) for d in range(10)}


def _with_zero_width(rng: random.Random, text: str) -> str:
    cut = rng.randrange(1, len(text)) if len(text) > 1 else 1
    return text[:cut] + rng.choice(ZERO_WIDTH) + text[cut:]


def _digits_as(rng: random.Random, text: str) -> str:
    table = rng.choice((_FULL_WIDTH, _DEVANAGARI, _BENGALI, _ARABIC_INDIC))
    return "".join(table.get(char, char) if char.isdigit() else char for char in text)


# Where a number written as one run of digits is cut into its usual groups.
_GROUPS = {10: (5,), 11: (3, 7), 12: (4, 8), 13: (4, 8, 12), 15: (4, 10), 16: (4, 8, 12)}


def _regrouped(rng: random.Random, text: str) -> str:
    """Every separator between digit groups as another run; a run of plain
    digits cut into its usual groups by one."""
    run = rng.choice(SEPARATOR_RUNS)
    if re.search(r"\d[ -]\d", text):
        # A trunk or country prefix keeps its own gap: "0.98450" reads as a decimal.
        prefix = re.match(r"\(?\+?(?:0|91)\)?[ -]", text)
        kept = prefix.end() if prefix else 0
        return text[:kept] + re.sub(r"(?<=\d)[ -](?=\d)", lambda _: run, text[kept:])
    digits = re.search(r"\d{10,}", text)
    if digits is None or len(digits.group()) not in _GROUPS:
        return text
    cuts = (0, *_GROUPS[len(digits.group())], len(digits.group()))
    grouped = run.join(digits.group()[start:end] for start, end in itertools.pairwise(cuts))
    return text[: digits.start()] + grouped + text[digits.end() :]


def _spaced_digits(rng: random.Random, text: str) -> str:
    """One digit at a time: "+9 1 9 8 4 5 0 1 2 3 4 5"."""
    run = rng.choice((" ", "\u00a0", "."))
    return ("+" if text.startswith(("+", "(+")) else "") + run.join(char for char in text if char.isdigit())


def _spelled_at(rng: random.Random, text: str) -> str:
    local, _, domain = text.partition("@")
    form = rng.randrange(5)
    if form == 0:
        return f"{local}\uff20{domain}"
    if form == 1:
        return f"{local}{rng.choice(('[at]', '(at)', ' [at] ', ' (AT) ', '{at}'))}{domain}"
    if form == 2 and "." in domain:
        return f"{local} at {domain}"
    if form == 3 and "." in domain:
        dot = rng.choice((" [dot] ", "(dot)", " dot "))
        return f"{local.replace('.', dot)} {rng.choice(('at', '[at]'))} {domain.replace('.', dot)}"
    return _with_zero_width(rng, local) + "@" + domain


def _look_alike(rng: random.Random, text: str) -> str:
    places = [index for index, char in enumerate(text) if char in LOOK_ALIKES]
    if not places:
        return _with_zero_width(rng, text)
    index = rng.choice(places)
    return text[:index] + LOOK_ALIKES[text[index]] + text[index + 1 :]


def _full_width(_: random.Random, text: str) -> str:
    return "".join(_FULL_WIDTH.get(char, char) for char in text)


_DIGIT_WAYS = (_with_zero_width, _digits_as, _regrouped, _spaced_digits, _full_width)
OBFUSCATIONS: dict[str, tuple[Callable[[random.Random, str], str], ...]] = {
    "phone": _DIGIT_WAYS,
    "aadhaar": _DIGIT_WAYS,
    "card": _DIGIT_WAYS,
    "email": (_spelled_at, _full_width, _look_alike),
    "upi": (_spelled_at, _full_width),
    "person": (_look_alike, _with_zero_width, _full_width),
    "pan": (_full_width, _with_zero_width),
    "ifsc": (_full_width, _with_zero_width),
    "vehicle": (_full_width, _with_zero_width, _regrouped),
    "ip": (_digits_as, _full_width),
    "address": (_digits_as, _with_zero_width, _full_width),
    "coordinate": (_digits_as,),
}


def obfuscated(rng: random.Random, value: Personal) -> Personal:
    """The same value written another way a reader still reads as it: the
    probes are the new spelling and every probe of the plain one."""
    way = rng.choice(OBFUSCATIONS[value.kind])
    written = way(rng, value.written)
    if value.words:
        probes = tuple(dict.fromkeys((*written.split(), *value.probes)))
    else:
        probes = tuple(dict.fromkeys((written, *value.probes)))
    return Personal(value.kind, written, probes, number=value.number, words=value.words, loose=value.loose)


# --- harmless values --------------------------------------------------------------

ZONES = (
    "Koramangala",
    "Indiranagar",
    "HSR Layout Sector 2",
    "Whitefield",
    "Jayanagar 4th Block",
    "Anna Nagar",
    "Vijay Nagar",
    "Electronic City Phase 1",
    "Bandra West",
    "Gachibowli",
    "Salt Lake",
    "Connaught Place",
)
STATUSES = (
    "waiting",
    "assigned",
    "picked_up",
    "in_transit",
    "delivered",
    "cancelled",
    "stalled",
    "EV scooter",
    "prepaid",
    "cod",
)


def harmless(rng: random.Random) -> str | int | float:
    pick = rng.randrange(20)
    if pick == 0:
        return f"BK-{rng.randrange(1000, 10**6)}"
    if pick == 1:
        return f"ORD-{rng.randrange(2024, 2027)}-{rng.randrange(10**6):06d}"
    if pick == 2:
        return rng.randrange(1, 10**9)
    if pick == 3:
        return round(rng.uniform(20, 25000), 2)
    if pick == 4:
        return (
            f"{rng.randrange(2024, 2027)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T"
            f"{rng.randrange(24):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"
            + rng.choice(("+05:30", "Z", ".123456+05:30", "+00:00", "-04:00"))
        )
    if pick == 5:
        return (
            f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-4{rng.getrandbits(12):03x}-"
            f"{rng.choice('89ab')}{rng.getrandbits(12):03x}-{rng.getrandbits(48):012x}"
        )
    if pick == 6:
        return rng.choice(ZONES)
    if pick == 7:
        return rng.choice(STATUSES)
    if pick == 8:
        return f"{rng.randrange(1, 90)} min"
    if pick == 9:
        return rng.randrange(0, 180)
    if pick == 10:
        return rng.randrange(1_700_000_000, 1_800_000_000)
    if pick == 11:
        return rng.randrange(1_700_000_000_000, 1_800_000_000_000)
    if pick == 12:
        return f"₹{rng.randrange(50, 99999):,}.{rng.randrange(100):02d}"
    if pick == 13:
        return round(rng.random(), rng.choice((2, 4)))
    if pick == 14:
        return f"{rng.uniform(0.2, 25):.1f} km"
    if pick == 15:
        return f"{rng.choice(('BLR', 'HYD', 'MUM', 'DEL'))}-HUB-{rng.randrange(1, 40):02d}"
    if pick == 16:
        return f"{rng.randrange(24):02d}:{rng.randrange(60):02d}"
    if pick == 17:
        return f"{rng.randrange(100)}%"
    if pick == 18:
        return f"{rng.randrange(2024, 2027)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"
    return f"v{rng.randrange(1, 9)}.{rng.randrange(20)}.{rng.randrange(20)}"


def harmless_words(rng: random.Random) -> str:
    """A harmless value that can sit inside a sentence: no bare numbers."""
    value = harmless(rng)
    return value if isinstance(value, str) else f"#{value}"


FILLER = (
    "rider",
    "stuck",
    "near",
    "call",
    "on",
    "at",
    "for",
    "booking",
    "ETA",
    "since",
    "the",
    "customer",
    "asked",
    "—",
    "via",
    "and",
    "said",
    "reassign",
    "pickup",
    "drop",
)
WRAPS = (("", ""), ("(", ")"), ("", ","), ("", "."), ('"', '"'), ("", ":"), ("<", ">"), ("[", "]"))

PLAIN_KEYS = ("data", "items", "summary", "text", "payload", "status_text", "detail", "message", "info", "meta")
PERSONAL_KEYS = (
    "customer_name",
    "riderName",
    "RIDER-NAME",
    "rider",
    "assigned_to",
    "fullname",
    "customer",
    "phone",
    "mobile_no",
    "alt_phone",
    "email",
    "contact",
    "street",
    "pincode",
    "drop_address",
    "landmark",
    "upi_id",
    "vehicle_number",
    "aadhaar_no",
    "pan",
)
HARMLESS_KEYS = (
    "booking_id",
    "order_id",
    "amount",
    "status",
    "zone",
    "zone_name",
    "hub",
    "eta_min",
    "created_at",
    "promised_by",
    "rider_id",
    "customer_id",
    "miler_id",
    "tenant_id",
    "payment_mode",
    "distance_km",
    "confidence",
    "count",
    "reason_code",
    "vehicle",
)


# --- documents ------------------------------------------------------------------------


@dataclass
class Planted:
    document: Any
    personal: list[Personal] = field(default_factory=list)
    # Harmless values placed whole: they must come back equal, keys as keys.
    harmless_leaves: list[Any] = field(default_factory=list)
    harmless_keys: list[str] = field(default_factory=list)
    # Harmless words inside strings that also hold a personal value.
    harmless_words: list[str] = field(default_factory=list)
    obfuscate: bool = False


def planted_document(rng: random.Random, *, size: int = 8, obfuscate: bool = False) -> Planted:
    """A JSON object with `size` planted slots, nested to a random depth;
    with `obfuscate`, every personal value written to walk around a pattern."""
    planted = Planted({}, obfuscate=obfuscate)
    containers: list[Any] = [planted.document]
    for _ in range(size):
        parent = rng.choice(containers)
        slot = rng.randrange(9)
        if slot == 0:
            child: Any = {} if rng.random() < 0.6 else []
            _put(rng, planted, parent, child)
            containers.append(child)
        elif slot in (1, 2):
            _put(rng, planted, parent, _harmless_leaf(rng, planted))
        else:
            _plant_personal(rng, planted, parent)
    return planted


def _put(rng: random.Random, planted: Planted, parent: Any, value: Any, key: str | None = None) -> None:
    if isinstance(parent, list):
        parent.append(value)
        return
    if key is None:
        key = _fresh(parent, rng.choice(HARMLESS_KEYS + PLAIN_KEYS), rng)
        if key.split("~")[0] in HARMLESS_KEYS:
            planted.harmless_keys.append(key)
    parent[key] = value


def _fresh(parent: dict[str, Any], key: str, rng: random.Random) -> str:
    while key in parent:
        key = f"{key.split('~')[0]}~{rng.randrange(10**6)}"
    return key


def _harmless_leaf(rng: random.Random, planted: Planted) -> Any:
    value = harmless(rng)
    planted.harmless_leaves.append(value)
    return value


def _plant_personal(rng: random.Random, planted: Planted, parent: Any) -> None:
    value = rng.choice(PERSONAL)(rng)
    if planted.obfuscate:
        value = obfuscated(rng, value)
    planted.personal.append(value)
    places = ["personal_key"]
    if value.loose:
        places += ["value", "key", "sentence", "sentence"]
    else:
        places += ["honorific"]
    if value.number is not None:
        places.append("number")
    if value.kind == "coordinate":
        places += ["pair", "object"]
    place = rng.choice(places)
    if place in ("personal_key", "key") and isinstance(parent, list):
        parent.append({})
        parent = parent[-1]
    if place == "personal_key":
        parent[_fresh(parent, rng.choice(PERSONAL_KEYS), rng)] = value.written
    elif place == "key":
        inner = _harmless_leaf(rng, planted)
        parent[_fresh(parent, value.written, rng)] = inner
    elif place == "number":
        _put(rng, planted, parent, value.number)
    elif place in ("pair", "object"):
        lat, lon = (float(p) for p in re.findall(r"\d+\.\d+", value.written))
        _put(rng, planted, parent, [lat, lon] if place == "pair" else {"lat": lat, "lng": lon})
    elif place in ("sentence", "honorific"):
        opening, closing = rng.choice(WRAPS)
        before = [rng.choice(FILLER) if rng.random() < 0.6 else _harmless_word(rng, planted) for _ in range(2)]
        after = [rng.choice(FILLER) if rng.random() < 0.6 else _harmless_word(rng, planted) for _ in range(2)]
        if place == "honorific":
            opening = rng.choice(("Mr. ", "Mrs ", "Dr. ", "Shri ", "Smt. "))
        _put(rng, planted, parent, " ".join([*before, opening + value.written + closing, *after]))
    else:
        _put(rng, planted, parent, value.written)


def _harmless_word(rng: random.Random, planted: Planted) -> str:
    word = harmless_words(rng)
    planted.harmless_words.append(word)
    return word


# --- judging ---------------------------------------------------------------------------


def strings_in(value: Any) -> Iterator[str]:
    """Every key, string and number of a JSON value, as text."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif value is not None and not isinstance(value, bool):
        yield str(value) if not isinstance(value, float) else repr(value)


def leaves_in(value: Any) -> Iterator[Any]:
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from leaves_in(item)
    else:
        yield value


def keys_in(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from keys_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from keys_in(item)


@dataclass
class Verdict:
    planted: int = 0
    leaked: list[tuple[str, str]] = field(default_factory=list)
    harmless: int = 0
    # (where, value): "leaf", "key" or "word" (inside a sentence).
    harmed: list[tuple[str, Any]] = field(default_factory=list)
    planted_by_kind: Counter[str] = field(default_factory=Counter)
    leaked_by_kind: Counter[str] = field(default_factory=Counter)


def judge(planted: Planted, redacted: Any, verdict: Verdict | None = None) -> Verdict:
    verdict = verdict or Verdict()
    output = "\n".join(strings_in(redacted))
    for value in planted.personal:
        verdict.planted += 1
        verdict.planted_by_kind[value.kind] += 1
        for probe in value.leaked(output):
            verdict.leaked.append((value.kind, probe))
            verdict.leaked_by_kind[value.kind] += 1
    # Whole values come back equal and of the same type, as many times as planted.
    remaining = Counter((type(v).__name__, v) for v in leaves_in(redacted))
    for leaf in planted.harmless_leaves:
        verdict.harmless += 1
        if remaining[(type(leaf).__name__, leaf)] > 0:
            remaining[(type(leaf).__name__, leaf)] -= 1
        else:
            verdict.harmed.append(("leaf", leaf))
    keys = set(keys_in(redacted))
    for key in planted.harmless_keys:
        verdict.harmless += 1
        if key not in keys:
            verdict.harmed.append(("key", key))
    for word in planted.harmless_words:
        verdict.harmless += 1
        if word not in output:
            verdict.harmed.append(("word", word))
    return verdict
