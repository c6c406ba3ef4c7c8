"""Outcomes routes (DESIGN.md §4)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter(tags=["outcomes"])
