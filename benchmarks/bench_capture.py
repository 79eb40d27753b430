"""Precision and recall of the Stop hook's capture trigger on real-shaped turns (a script, not a test).

    python benchmarks/bench_capture.py

The turns are tests/capture_fixtures.py: FIXTURES were written together with the rules, HELD_OUT
afterwards and never used to change them. Prints both, with every wrong decision named.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from capture_fixtures import FIXTURES, HELD_OUT  # noqa: E402

from pinky.capture import find_evidence, saved_in  # noqa: E402


def main() -> None:
    for label, fixtures in (("written with the rules", FIXTURES), ("held out", HELD_OUT)):
        tp = fp = fn = 0
        wrong = []
        for name, should, events in fixtures:
            asked = bool(find_evidence(events)) and not saved_in(events)
            tp += asked and should
            fp += asked and not should
            fn += should and not asked
            if asked != should:
                wrong.append(f"{'asked' if asked else 'missed'}: {name}")
        precision = tp / max(tp + fp, 1)
        recall = tp / max(tp + fn, 1)
        print(f"{label:<24} turns {len(fixtures):>3}  should ask {tp + fn:>3}  precision {precision:.2f}  "
              f"recall {recall:.2f}")
        for line in wrong:
            print(f"    {line}")


if __name__ == "__main__":
    main()
