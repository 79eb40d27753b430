"""All SQL lives in this package, split by subject.

- `connect`: the connection factory (driver choice, sqlite-vec, WAL), transactions.
- `migrations`: ordered, named schema migrations.
- `entries`: entries and chunks as the indexer writes them; slug lookup, listings, counts.
- `vectors`: the vec0 table, the embedder fingerprint in `meta`, pending chunks, the embedding cache.
- `retrieval`: full-text and vector candidates under filters, hit rows, usage telemetry.
- `graph`: links between entries and code (`files:`, mentions, `[[links]]`, breadcrumbs).
- `readonly`: the hooks' read path, stdlib `_sqlite3` only.

Nothing is imported here eagerly: the hooks import `pinky.store.readonly` and must not pay for
`sqlite3`, `logging` and `dataclasses`, which the connection factory needs.
"""

from __future__ import annotations

__all__ = ["Database", "open_database", "write_transaction"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from pinky.store import connect

        return getattr(connect, name)
    raise AttributeError(f"module 'pinky.store' has no attribute {name!r}")
