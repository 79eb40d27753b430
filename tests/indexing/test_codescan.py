"""Breadcrumbs in code: found by reindex, incremental, shown by related(), dangling ones by doctor."""

from __future__ import annotations

from pathlib import Path

from helpers import write_note

from pinky.config import load_config
from pinky.kb import KnowledgeBase
from pinky.services.doctor import run_checks


def test_reindex_links_code_to_entries_and_doctor_flags_dangling_ones(project: Path) -> None:
    write_note(project / "documentation", "gotcha/pool.md", "---\ntitle: Pool hangs\ntype: gotcha\n---\nClose it.\n")
    write_note(project, "src/db.py", "def close():  # Brain: gotcha/pool\n    pass\n")
    write_note(project, "src/app.py", "\n\n# Brain: pool\n")
    write_note(project, "src/old.py", "# Brain: gotcha/renamed-long-ago\n")
    write_note(project, "node_modules/lib/x.js", "// Brain: gotcha/pool\n")  # dependencies are not ours
    (project / "src/blob.bin").write_bytes(b"\0\0Brain: gotcha/pool\n")
    with KnowledgeBase(load_config()) as kb:
        kb.reindex()
        code = kb.related("gotcha/pool")["code"]
        assert [(c["file"], c["line"], c["source"]) for c in code] == [("src/app.py", 3, "breadcrumb"),
                                                                       ("src/db.py", 1, "breadcrumb")]
        check = next(c for c in run_checks(kb) if c.name == "code breadcrumbs")
        assert check.status == "warn" and "src/old.py:1 (gotcha/renamed-long-ago)" in check.detail
        (project / "src/app.py").write_text("# the breadcrumb is gone\n")
        (project / "src/old.py").unlink()
        kb.reindex()
        assert [c["file"] for c in kb.related("gotcha/pool")["code"]] == ["src/db.py"]
        assert next(c for c in run_checks(kb) if c.name == "code breadcrumbs").status == "ok"
