"""Taking in what changed in the global brain, alone: what the hooks call when `pinky.base.global_signature` says the
index they read is behind (every KnowledgeBase operation does it first anyway, `pinky.indexing.refresh`)."""

from __future__ import annotations

from pinky.config import Config


def take_in(config: Config, *, embed: bool = False) -> bool:
    """Reindex the global root of `config`'s index when the global brain changed since it last did, healed like
    any operation; `embed`: give a few new chunks their vectors too (the hooks leave that to others). True when
    something had changed."""
    from pinky.indexing import healing
    from pinky.indexing.index import Index

    index = Index(config)
    try:
        return healing.heal(index, lambda: healing.refresh_global(index, embed=embed), fresh=False)
    finally:
        index.close()
