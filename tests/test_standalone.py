"""The product stands on its own: no file of the repository points at material outside it.

The team's working notes and datasets lived in a folder beside the clone; documents, messages (`pinky-brain
doctor`, HOSTS.md's sources), benchmarks and tests once sent users there, where a user has nothing. A dataset a
benchmark needs is named by a flag or `EVAL_DATA=DIR`, never by a default path outside the repository.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE = ("../" + "shared", "/work/" + "shared", "shared" + "/tools", "shared" + "/eval", "shared" + "/design",
           "/work/" + "main")


def repository_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    return [ROOT / name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def test_no_file_of_the_repository_points_outside_it() -> None:
    files = repository_files()
    assert len(files) > 100 and ROOT / "Makefile" in files
    found = []
    for path in files:
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # a binary file (the bundled model)
        text = data.decode("utf-8", "replace")
        found += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, text.index(word)) + 1}: {word}"
                  for word in OUTSIDE if word in text]
    assert found == [], "\n".join(found)


def test_the_eval_target_asks_for_its_data_instead_of_assuming_a_folder() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "EVAL_DATA ?=" not in makefile and "make eval needs EVAL_DATA=DIR" in makefile
