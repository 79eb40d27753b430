"""Age in ranking, on a fixture of equal texts that differ only in age (a script, not a test).

    python benchmarks/bench_age_ranking.py [--pairs N]

The retrieval sets (benchmarks/eval_retrieval.py) carry no dates, so age can only be judged here: N pairs of identical
notes, one verified 3 days ago and one 300 days ago (which one is written first alternates). For each
pair's topic it searches and prints how often the fresher copy ranks first: in the fused ranking alone
(ties fall to the entry ids, a hash) and in what `pinky search` returns (equal scores go to the fresher
entry; nothing else moves, so the eval figures cannot change). Uses the hashing embedder.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORDS = ("kafka redis nginx postgres celery docker terraform grpc jwt oauth helm istio vault consul kibana "
         "grafana prometheus sentry airflow spark flink hadoop cassandra mongo elastic rabbit nats envoy "
         "traefik caddy").split()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=50)
    args = parser.parse_args()
    os.environ["PINKY_HASH_EMBED"] = "1"
    sys.path.insert(0, str(REPO / "src"))
    from pinky.config import load_config
    from pinky.kb import KnowledgeBase
    from pinky.search.hybrid import fuse, lexical_hits, semantic_hits
    from pinky.store.retrieval import Filters

    root = Path(tempfile.mkdtemp(prefix="pinky-age-"))
    docs = root / "documentation"
    today = dt.date.today()
    topics = [f"{WORDS[n % len(WORDS)]} {WORDS[(n * 7 + 3) % len(WORDS)]} case{n}" for n in range(args.pairs)]
    for n, topic in enumerate(topics):
        for side, age in (("a", 300 if n % 2 else 3), ("b", 3 if n % 2 else 300)):
            path = docs / "note" / f"{n}-{side}.md"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"---\ntitle: {topic}\nlast_verified: {today - dt.timedelta(days=age)}\n---\n"
                            f"How {topic} behaves in production and what to do about it.\n", encoding="utf-8")
    with KnowledgeBase(load_config(home=root / "home", db=root / "brain.db", save_dir=docs)) as kb:
        kb.reindex()
        fresh_ids = {r[0] for r in kb.db.conn.execute("SELECT id FROM entry WHERE last_verified >= ?",
                                                      ((today - dt.timedelta(days=10)).isoformat(),))}
        fused_first = searched_first = 0
        for topic in topics:
            ranked = fuse(kb.index, topic, lexical_hits(kb.index, topic, Filters()),
                          semantic_hits(kb.index, topic, Filters()), 2)
            fused_first += ranked[0][0] in fresh_ids
            searched_first += kb.search(topic, limit=2).hits[0].age_days == 3
    print(f"{args.pairs} pairs of equal texts: the fresher ranks first in {fused_first} by the fused ranking alone, "
          f"in {searched_first} as pinky search returns them")


if __name__ == "__main__":
    main()
