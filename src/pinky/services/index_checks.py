"""`pinky doctor`'s checks of the index and its search engine: the SQLite driver, full-text and vector search,
the embedder, the vectors' fingerprint, the second stage, the schema and the file's integrity (the checks of the
notes, the project and the installation are `pinky.services.doctor`'s). Each asks the core through
KnowledgeBase.health."""

from __future__ import annotations

import importlib.util
import sys

from pinky.indexing.audit import DIFFERED
from pinky.kb import KnowledgeBase
from pinky.setup.check import Check


def driver(kb: KnowledgeBase) -> Check:
    db = kb.db
    detail = f"{db.driver} (SQLite {db.sqlite_version}) on Python {sys.version.split()[0]}"
    return Check("sqlite driver", "ok", detail)


def fts(kb: KnowledgeBase) -> Check:
    if kb.health.fts5():
        return Check("full-text search (FTS5)", "ok", "available")
    return Check("full-text search (FTS5)", "error", "this SQLite build lacks FTS5",
                 "pip install --force-reinstall sqlean.py (pinky uses it when the stdlib build lacks features)")


def vectors(kb: KnowledgeBase) -> Check:
    db = kb.db
    if db.vec_available:
        return Check("vector search (sqlite-vec)", "ok", f"sqlite-vec {db.vec_version}")
    return Check("vector search (sqlite-vec)", "warn", f"unavailable: {db.vec_error}; search is full-text only",
                 "pip install sqlean.py sqlite-vec (a Python whose sqlite3 cannot load extensions needs sqlean.py)")


def embedder(kb: KnowledgeBase) -> Check:
    from pinky.embed import use_runtime
    from pinky.embed.embedding import UniversalSentenceEncoder

    try:
        embedder = kb.embedder
        vector = embedder.embed(["a probe of the embedder"])
    except Exception as exc:
        return Check("embedder", "error", f"{kb.config.embedder}: {exc}",
                     "reinstall pinky-brain, or set PINKY_HASH_EMBED=1 for the model-free embedder")
    detail = f"{embedder.name}, {vector.shape[1]} dimensions"
    if embedder.name != UniversalSentenceEncoder.name:
        return Check("embedder", "ok", detail)
    missing = [name for name in use_runtime.PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        return Check("embedder", "warn", f"{detail}; bulk embedding on numpy alone ({' and '.join(missing)} missing)",
                     f"pip install {' '.join(missing)} (about twice the indexing throughput, same vectors)")
    return Check("embedder", "ok", f"{detail}; bulk embedding on onnxruntime + sentencepiece")


def fingerprint(kb: KnowledgeBase) -> Check:
    stored, stored_embedder = kb.health.stored_vectors()
    current = kb.fingerprint()
    if stored is None:
        if not kb.health.pending_vectors():  # a brand-new brain: nothing to embed is nothing wrong
            return Check("vector fingerprint", "ok", f"{current}; no notes to embed yet")
        return Check("vector fingerprint", "warn", "no vectors built yet", "pinky-brain reindex")
    if stored != current:
        return Check("vector fingerprint", "warn",
                     f"vectors were built with {stored} ({stored_embedder}), the current "
                     f"embedder and chunker give {current}; vector search is off until they are rebuilt",
                     "pinky-brain reindex")
    pending = kb.health.pending_vectors()
    if pending:
        return Check("vector fingerprint", "warn", f"{current}; {pending} chunks still lack vectors",
                     "pinky-brain reindex")
    return Check("vector fingerprint", "ok", current)


def second_stage(kb: KnowledgeBase) -> Check:
    """The second-stage retriever (pinky.search.second_stage): off, not installed, filling, or ranking."""
    name = "second-stage vectors"
    status = kb.second_stage()
    if kb.config.quality == "off":
        return Check(name, "ok", "off (PINKY_QUALITY=off, or not the default embedder): the first stage ranks alone")
    if not status["available"]:
        return Check(name, "warn", status["why"])
    done, total = status["chunks"], status["total"]
    if done < total:
        return Check(name, "warn", f"{status['model']}: {done} of {total} chunks have one; the rest rank by the "
                     "default embedder until filled (pinky-mcp fills them in the background)",
                     "pinky-brain reindex --quality")
    return Check(name, "ok", f"{status['model']}: all {total} chunks")


def schema(kb: KnowledgeBase) -> Check:
    done, known = kb.health.migrations()
    detail = f"{len(done)} of {len(known)} migrations applied ({done[-1] if done else 'none'})"
    if kb.rebuilt_reason:
        return Check("index schema", "warn", f"{detail}; rebuilt because {kb.rebuilt_reason}", "pinky-brain reindex")
    return Check("index schema", "ok" if done == known else "error", detail)


def integrity(kb: KnowledgeBase, *, full: bool = False) -> Check:
    """Damaged pages: SQLite's quick_check over the whole file (`full`: integrity_check, which also
    matches every index to its table). A damaged index is rebuilt from the markdown on the spot (it is
    derived from it), but still reported as an error: something broke it."""
    name, kept = "index integrity", f"{kb.config.db_path.name}.corrupt"
    corruption = kb.health.corruption()
    if corruption:  # found damaged when this run opened it: moved aside, a fresh one started
        kb.reindex(embed=False)
        return Check(name, "error", f"{corruption}; rebuilt from the markdown (the damaged copy is {kept})",
                     "nothing more to do; if it happens again, check the disk and who else writes that file")
    problem = kb.verify(full=full)
    if problem and problem.startswith(DIFFERED):
        return Check(name, "error", f"the index's {problem}; rebuilt those from the files",
                     "nothing more to do; if it happens again, check the disk")
    if problem:
        return Check(name, "error", f"the index was damaged ({problem}); rebuilt from the markdown (the damaged "
                     f"copy is {kept})", "nothing more to do; if it happens again, check the disk")
    if full:
        return Check(name, "ok", "every page, row and index sound (integrity_check), and every row as the markdown "
                     "gives it (a content audit)")
    return Check(name, "ok", "every page sound (quick_check; `pinky-brain doctor --full` also matches each index to "
                 "its table)")


def full_integrity(kb: KnowledgeBase) -> Check:
    return integrity(kb, full=True)


# In the order doctor shows them (the index first: every other check reads it).
CHECKS = (driver, fts, vectors, embedder, schema, integrity, fingerprint, second_stage)
