"""What a benchmark measured, by name, for `bench_all.py` to gather into one table (`--json FILE`)."""

from __future__ import annotations

import json
from pathlib import Path

FIGURES: dict[str, float] = {}


def record(name: str, value: float) -> float:
    FIGURES[name] = round(float(value), 3)
    return value


def write(path: Path | None) -> None:
    if path is not None:
        path.write_text(json.dumps(FIGURES, indent=1) + "\n", encoding="utf-8")
