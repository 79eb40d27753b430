"""`pinky init`: lay out a project's knowledge folder. Idempotent: only adds what is missing."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from pinky.config import ENTRY_TYPES, Config

GITIGNORE_LINES = ("brain.db", "brain.db-*", "brain.db.corrupt")


def _template(kind: str) -> str:
    return resources.files("pinky.templates").joinpath(f"{kind}.md").read_text(encoding="utf-8")


def init_project(config: Config) -> list[str]:
    """Create the save dir, one folder per type with `_template.md`, and ignore the index in git."""
    created: list[str] = []
    root = config.save_dir
    for kind in ENTRY_TYPES:
        folder = root / kind
        if not folder.is_dir():
            folder.mkdir(parents=True)
            created.append(f"{folder}/")
        template = folder / "_template.md"
        if not template.exists():
            template.write_text(_template(kind), encoding="utf-8")
            created.append(str(template))
    created += _ignore_index(root.parent / ".gitignore", config.db_path, root.parent)
    return created


def _ignore_index(gitignore: Path, db_path: Path, project_root: Path) -> list[str]:
    lines = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
    name = db_path.name if db_path.parent == project_root else None
    wanted = list(GITIGNORE_LINES) if name in (None, "brain.db") else [name, f"{name}-*"]
    missing = [line for line in wanted if line not in lines]
    if not missing:
        return []
    text = "\n".join(lines + (["", "# pinky-brain index (derived from the markdown; rebuild: pinky reindex)"]
                              if lines else ["# pinky-brain index (derived from the markdown; rebuild: pinky reindex)"])
                     + missing) + "\n"
    gitignore.write_text(text, encoding="utf-8")
    return [f"{gitignore} (+{', '.join(missing)})"]
