"""A small logistics backend on loopback, shaped like the example deployment's
API, for the registry's external read tools (get_booking_cache,
list_express_bookings, list_express_riders, scan_bookings) to run against.

Its records carry realistic personal fields on purpose: names, phones, e-mail
addresses, notes and precise coordinates. Pointing the playground at it shows
what redaction removes before anything reaches the model.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import FastAPI, HTTPException, Query

FIRST_NAMES = ("Aarav", "Diya", "Ishaan", "Meera", "Kabir", "Ananya", "Rohan", "Saanvi", "Vihaan", "Kavya")
LAST_NAMES = ("Sharma", "Iyer", "Reddy", "Nair", "Gupta", "Menon", "Rao", "Das", "Kulkarni", "Bose")
STREETS = (
    "12th Main, Indiranagar",
    "80 Feet Rd, Koramangala",
    "CMH Rd, Indiranagar",
    "HSR Layout Sector 2",
    "Jayanagar 4th Block",
    "Whitefield Main Rd",
    "MG Road",
    "Brigade Rd",
)
STATUSES = ("waiting", "assigned", "picked_up", "in_transit", "delivered", "cancelled")


@dataclass(frozen=True, slots=True)
class Rider:
    rider_id: int
    tenant_id: int
    name: str
    phone: str
    vehicle: str
    lat: float
    lon: float
    battery_pct: int
    active_bookings: int


@dataclass(frozen=True, slots=True)
class Booking:
    booking_id: int
    tenant_id: int
    status: str
    customer_name: str
    customer_phone: str
    customer_email: str
    drop_address: str
    note: str
    pickup_lat: float
    pickup_lon: float
    drop_lat: float
    drop_lon: float
    rider_id: int | None
    amount: float
    payment_mode: str
    sla_due_at: str
    created_at: str


def _phone(rng: random.Random) -> str:
    return f"+91 {rng.choice('6789')}{rng.randrange(10**8, 10**9)}"


def build_world(
    *, seed: int = 7, riders: int = 12, bookings: int = 40, tenant_id: int = 3
) -> tuple[list[Rider], list[Booking]]:
    rng = random.Random(seed)
    now = datetime.now(UTC).replace(microsecond=0)

    def person() -> str:
        return f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"

    fleet = [
        Rider(
            rider_id=500 + i,
            tenant_id=tenant_id,
            name=person(),
            phone=_phone(rng),
            vehicle=rng.choice(("EV scooter", "bike", "van")),
            lat=12.9 + rng.random() * 0.1,
            lon=77.55 + rng.random() * 0.1,
            battery_pct=rng.randrange(8, 100),
            active_bookings=rng.randrange(0, 4),
        )
        for i in range(riders)
    ]
    orders = []
    for i in range(bookings):
        name = person()
        status = rng.choice(STATUSES)
        orders.append(
            Booking(
                booking_id=1000 + i,
                tenant_id=tenant_id,
                status=status,
                customer_name=name,
                customer_phone=_phone(rng),
                customer_email=f"{name.split()[0].lower()}.{rng.randrange(10, 99)}@example.in",
                drop_address=f"{rng.randrange(1, 400)}, {rng.choice(STREETS)}, Bengaluru 5600{rng.randrange(10, 99)}",
                note=rng.choice(
                    (
                        "Call before arriving",
                        "Leave with security",
                        "Fragile, handle with care",
                        f"Alternate number {_phone(rng)}",
                    )
                ),
                pickup_lat=12.9 + rng.random() * 0.1,
                pickup_lon=77.55 + rng.random() * 0.1,
                drop_lat=12.9 + rng.random() * 0.1,
                drop_lon=77.55 + rng.random() * 0.1,
                rider_id=None if status == "waiting" else rng.choice(fleet).rider_id,
                amount=round(rng.uniform(80, 2400), 2),
                payment_mode=rng.choice(("prepaid", "cod")),
                sla_due_at=(now + timedelta(minutes=rng.randrange(-30, 240))).isoformat(),
                created_at=(now - timedelta(minutes=rng.randrange(10, 600))).isoformat(),
            )
        )
    return fleet, orders


def create_backend(*, seed: int = 7) -> FastAPI:
    riders, bookings = build_world(seed=seed)
    app = FastAPI(title="Demo logistics backend", docs_url=None, redoc_url=None)

    @app.get("/bookings/cache/{booking_id}")
    async def booking_cache(booking_id: int) -> dict[str, Any]:
        for booking in bookings:
            if booking.booking_id == booking_id:
                return asdict(booking)
        raise HTTPException(404, f"no booking {booking_id}")

    @app.get("/internal/express/bookings")
    async def express_bookings(tenant_id: int, status: str | None = None) -> dict[str, Any]:
        wanted = status or "waiting"
        items = [asdict(b) for b in bookings if b.tenant_id == tenant_id and b.status == wanted]
        return {"items": items}

    @app.get("/internal/express/riders")
    async def express_riders(tenant_id: int) -> dict[str, Any]:
        return {"items": [asdict(r) for r in riders if r.tenant_id == tenant_id]}

    @app.get("/admin/bookings")
    async def scan_bookings(status: str | None = None, limit: int = Query(50, ge=1, le=200)) -> dict[str, Any]:
        chosen = [
            b for b in bookings if (status is None and b.status not in ("delivered", "cancelled")) or b.status == status
        ]
        chosen.sort(key=lambda b: b.created_at, reverse=True)
        return {"items": [asdict(b) for b in chosen[:limit]]}

    return app
