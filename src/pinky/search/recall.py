"""Recall on every prompt: the few brain entries a user's prompt is clearly about, or nothing.

The UserPromptSubmit hook runs this before the model sees each prompt, in a fresh process with a
150 ms budget, so it is full-text only (loading the embedder alone takes about a second) and
reads the index through `pinky.store.readonly`. The hard part is not finding candidates (BM25
does) but staying quiet: most prompts ("run the tests", "commit this") are about nothing in the
brain, and a hook that injects noise on every prompt teaches the model to ignore it.

So each candidate is gated by a *relevance* score: the information (IDF mass) of the prompt's
words that the entry's best chunk contains, minus half the information it leaves out (words of
the prompt the chunk lacks; words the brain has never seen count at 3/4 of their weight), in units
of the rarest possible word (log of the chunk count). A long prompt that shares a few common words
with a note scores low because of all it leaves out; a short prompt whose rare words are all in
one note scores high. Measured on the team's retrieval sets (`benchmarks/eval_recall.py`, figures
in documentation/HOOKS.md), this gate kept 92-99 % of unrelated prompts silent where plain
coverage or plain BM25 scores could not serve short and long prompts with one threshold.
A prompt of several asks ("Why does the pool hang at shutdown? Also shrink the cache.") is also
judged clause by clause: judged whole, every note scores low for the words of the other ask it leaves
out. A clause of four content words or more that clears the gate by CLAUSE_MARGIN is enough.
Stdlib only.
"""

from __future__ import annotations

import math
import time

from pinky.store import readonly

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from sqlite3 import Connection

DEFAULT_THRESHOLD = 0.68
ABSENT_WEIGHT = 0.75
MISSING_PENALTY = 0.5
MAX_SHOWN = 3
DEPTH = 10
MAX_PROMPT_CHARS = 4000
MAX_TERMS = 32
# IDF needs many documents to say anything: in a brain of three notes every word is "common". The
# counts are taken as if the brain also held this many chunks that contain none of the prompt's
# words (a background of other text), so a small brain still tells a rare word from a missing one.
BACKGROUND_CHUNKS = 1000

# Where one ask ends and the next begins: a sentence's end followed by space, or a line break.
_CLAUSE_END = (".", "?", "!", ";")
MIN_CLAUSE_TERMS = 4  # a short ask ("also add type hints") matches some note of a large brain too easily
MAX_CLAUSES = 4  # each clause costs one more round of queries in a hook with a 150 ms budget
# A clause judged alone leaves out less than the whole prompt, so it must clear a higher bar: its score
# counts this much less. Measured on two-ask prompts (benchmarks/eval_recall.py): at 0.42 with four words
# a clause, unrelated prompts stay exactly as silent as when judged whole (SciFact 0.979, CoSQA 0.977).
CLAUSE_MARGIN = 0.42
# Words that say how to ask, not what about: English, Spanish and Italian function words and the
# chatter of prompts to an agent. Content words are never listed here; IDF handles the rest.
STOPWORDS = frozenset("""
a an and are as at be been but by can could did do does doing done for from had has have he her him his
how i if in into is it its just let lets like me my no not now of on or our please should so some such
than that the their them then there these they this those to too up us use using very want was we were
what when where which while who why will with would yes you your yours ok okay thanks thank hi hello hey
also again here any all about after before make made need needs get got go going look see try tell
show give help find run running add fix change update write read file files code
el la los las un una unos unas de del y o que en es por para con como pero se su sus lo le al
il lo gli le uno di da che e con per come ma non si sono questo questa
""".split())


class Recalled:
    """A candidate entry: its id, its relevance score and its BM25 rank."""

    __slots__ = ("entry_id", "rank", "score")

    def __init__(self, entry_id: str, score: float, rank: int) -> None:
        self.entry_id, self.score, self.rank = entry_id, score, rank

    def __repr__(self) -> str:
        return f"Recalled({self.entry_id!r}, score={self.score:.3f}, rank={self.rank})"


class _Spaces(dict):
    """`str.translate`'s table that leaves the words of a text with spaces between them: a word character (what
    the regular expression `\\w` matches: `str.isalnum()` or `_`) stays, any other becomes a space. Filled as
    characters are met, so a text is translated at C speed. Not `re`: importing it costs the prompt hook ~5 ms,
    a third of the interpreter's own start."""

    def __missing__(self, code: int) -> int:
        char = chr(code)
        self[code] = kept = code if char.isalnum() or char == "_" else 32
        return kept


_SPACES = _Spaces()


def words(text: str) -> list[str]:
    """The runs of word characters in `text` (as `re.findall(r"\\w+", text)`)."""
    return text.translate(_SPACES).split()


def prompt_terms(prompt: str, limit: int = MAX_TERMS) -> list[str]:
    """The prompt's distinct content words, lowercased, in order; a pasted log is cut first."""
    words_of = (w.lower() for w in words(prompt[:MAX_PROMPT_CHARS]))
    kept = (w for w in words_of if len(w) > 1 and w not in STOPWORDS and not (w.isdigit() and len(w) < 3))
    return list(dict.fromkeys(kept))[:limit]


def idf(count: int, total: int) -> float:
    """BM25's inverse document frequency (the +1 form, never negative)."""
    return math.log((total - count + 0.5) / (count + 0.5) + 1.0)


def floor() -> float:
    """The relevance floor: the score a note must reach to be recalled on a prompt (PINKY_RECALL_MIN_SCORE,
    default DEFAULT_THRESHOLD). Search on the page and in the CLI cut at the same floor (`judge`)."""
    from pinky.base.locations import ENV_RECALL_MIN_SCORE, env_number

    return env_number(ENV_RECALL_MIN_SCORE, DEFAULT_THRESHOLD, -100.0, 100.0)


Weighed = tuple[dict[str, float], list[str], float]
Figures = tuple[int, dict[str, int]]  # readonly.word_figures: the index's chunk total, each word's chunk count


def _weights(figures: Figures, terms: list[str], absent_weight: float) -> Weighed | None:
    """Each word's weight (its IDF, 3/4 of it for a word no chunk has), the words some chunk has, and the
    unit of scores (the weight of a word found in no chunk: the most informative possible); None without
    words or chunks."""
    chunks, counts = figures
    if not terms or not chunks:
        return None
    total = chunks + BACKGROUND_CHUNKS
    weights = {t: idf(counts.get(t, 0), total) * (1.0 if counts.get(t) else absent_weight) for t in terms}
    return weights, [t for t in terms if counts.get(t)], idf(0, total)


def _score(weighed: Weighed, held: set[str], missing_penalty: float) -> tuple[float, bool]:
    """A chunk's relevance score from the words it holds, and whether it holds every word."""
    weights, _, unit = weighed
    mass = sum(weights.values())
    matched = sum(weight for term, weight in weights.items() if term in held)  # in the words' order: same sum
    return (matched - missing_penalty * (mass - matched)) / unit, len(held) == len(weights)


def needed_terms(weighed: Weighed, missing_penalty: float, at_least: float | None) -> list[str]:
    """The words of which a chunk must hold one to score `at_least` (None: every word some chunk has).

    A chunk's score grows with the weight of the words it holds, so one holding only the least informative
    words, all of them, scores the most such a chunk can: while that falls short, those words cannot lift a
    chunk over the floor alone, and the full-text query need not walk their long doclists (a word most notes
    hold costs a BM25 pass over most of the brain). [] when even every word together falls short."""
    weights, present, unit = weighed
    if at_least is None:
        return present
    mass = sum(weights.values())
    ordered = sorted(present, key=lambda t: weights[t])
    low = 0.0
    for n, term in enumerate(ordered):
        low += weights[term]
        if (low - missing_penalty * (mass - low)) / unit >= at_least:
            needed = set(ordered[n:])
            return [t for t in present if t in needed]  # the prompt's order: BM25's ties stay
    return []


def candidates(conn: Connection, prompt: str, *, depth: int = DEPTH, absent_weight: float = ABSENT_WEIGHT,
               missing_penalty: float = MISSING_PENALTY, at_least: float | None = None,
               figures: Figures | None = None) -> list[Recalled]:
    """The best BM25 entries for the prompt, each with its relevance score, in BM25 order (one per entry);
    with `at_least`, only entries that can reach that score are looked for (needed_terms). `figures`: the
    index's figures for the prompt's words, when the caller read them already (readonly.word_figures)."""
    terms = prompt_terms(prompt)
    weighed = _weights(readonly.word_figures(conn, terms) if figures is None else figures, terms, absent_weight)
    if weighed is None:
        return []
    found = readonly.best_chunks(conn, needed_terms(weighed, missing_penalty, at_least), weighed[1], depth)
    return [Recalled(entry_id, _score(weighed, held, missing_penalty)[0], rank)
            for rank, (_, entry_id, held) in enumerate(found)]


def judge(conn: Connection, query: str, slugs: list[str]) -> dict[str, tuple[float | None, str]]:
    """slug -> (relevance score, band) of each entry to a search query, by the prompt gate's own measure (its
    best chunk's score): band `strong` (at or over the floor, every word of the query in one chunk),
    `relevant` (at or over the floor) or `weak` (under it: search hides it unless asked). An entry that
    shares no word with the query (or a query of no content words) is weak."""
    terms = prompt_terms(query)
    weighed = _weights(readonly.word_figures(conn, terms), terms, ABSENT_WEIGHT)
    judged: dict[str, tuple[float, str]] = {}  # each slug's best chunk
    if weighed is not None and slugs:
        for _, slug, held in readonly.chunks_of(conn, list(dict.fromkeys(slugs)), weighed[1]):
            score, every = _score(weighed, held, MISSING_PENALTY)
            if slug not in judged or score > judged[slug][0]:
                judged[slug] = (score, "strong" if every else "relevant")
    cut = floor()
    return {slug: (round(judged[slug][0], 3), judged[slug][1] if judged[slug][0] >= cut else "weak")
            if slug in judged else (None, "weak") for slug in slugs}


def coverage(conn: Connection, query: str, slugs: list[str]) -> dict[str, float]:
    """slug -> the largest share of the query's words one chunk of the entry holds: the measure of
    `pinky.search.gaps` (its WEAK_COVERAGE), entry by entry; 0 for an entry with no chunk or a query of no word."""
    from pinky.text.lexical import query_terms

    words = query_terms(query)
    best: dict[str, float] = dict.fromkeys(slugs, 0.0)
    for _, slug, held in readonly.chunks_of(conn, list(dict.fromkeys(slugs)), words) if words and slugs else []:
        best[slug] = max(best[slug], len(held) / len(words))
    return best


def clauses(prompt: str) -> list[str]:
    """The prompt's sentences (or lines) that say enough on their own to be judged alone: at least
    MIN_CLAUSE_TERMS content words each, at most MAX_CLAUSES of them; [] when the prompt is one clause."""
    parts = asks(prompt[:MAX_PROMPT_CHARS])
    if len(parts) < 2:
        return []
    return [part for part in parts if len(prompt_terms(part)) >= MIN_CLAUSE_TERMS][:MAX_CLAUSES]


def asks(text: str) -> list[str]:
    """`text` cut where one ask ends and the next begins (after a sentence's end and a space, and at each line
    break), each part's spaces made single; no empty part."""
    parts: list[str] = []
    for line in text.split("\n"):
        ask: list[str] = []
        for word in line.split():
            ask.append(word)
            if word.endswith(_CLAUSE_END):
                parts.append(" ".join(ask))
                ask = []
        if ask:
            parts.append(" ".join(ask))
    return parts


def relevance(conn: Connection, prompt: str, at_least: float | None = None) -> list[Recalled]:
    """Each candidate entry with its best relevance to the whole prompt or to any one of its clauses.

    Judged whole, a prompt of two asks ("Why does the pool hang at shutdown? Also shrink the cache.") scores
    every note low for all the words of the other ask it leaves out; judged per clause, the note one ask is
    about scores as it would alone, less CLAUSE_MARGIN. Best first; a one-clause prompt keeps BM25's order.
    `at_least`: only entries that can score that much are looked for (needed_terms)."""
    parts = clauses(prompt)
    # the figures of every word, the whole prompt's and its clauses', in one read
    figures = readonly.word_figures(conn, list(dict.fromkeys(prompt_terms(prompt) + [
        term for part in parts for term in prompt_terms(part)])))
    found = candidates(conn, prompt, at_least=at_least, figures=figures)
    if not parts:
        return found
    best = {c.entry_id: c for c in found}
    for part in parts:
        for c in candidates(conn, part, at_least=None if at_least is None else at_least + CLAUSE_MARGIN,
                            figures=figures):
            c.score -= CLAUSE_MARGIN
            if c.entry_id not in best or c.score > best[c.entry_id].score:
                best[c.entry_id] = c
    return sorted(best.values(), key=lambda c: -c.score)


def recall(conn: Connection, prompt: str, *, threshold: float = DEFAULT_THRESHOLD, limit: int | None = MAX_SHOWN,
           exclude: frozenset[str] | set[str] = frozenset()) -> list[Recalled]:
    """The entries (at most `limit`; None: all) whose relevance to the prompt, or to one of its clauses, reaches
    `threshold`."""
    passed = [c for c in relevance(conn, prompt, threshold) if c.score >= threshold and c.entry_id not in exclude]
    return passed[:limit]


# --- what the model sees ----------------------------------------------------------------------------

HEADER = "pinky recall: brain entries that match this prompt (brain_get <slug> for the whole note):"


def _one_line(text: str, limit: int) -> str:
    from pinky.base.shown import plain

    text = plain(" ".join(text.split()))
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def gist(title: str, body: str) -> str:
    """The body's first line that says something the title does not."""
    for line in body.splitlines():
        text = line.strip().lstrip("#>*-0123456789. ").strip()
        if text and text.rstrip(".").lower() != title.strip().rstrip(".").lower():
            return text
    return ""


def age_note(created: object, verified: object, stale_after: int | None, now: float | None = None) -> str:
    """'verified 12 d ago', or a staleness warning past `stale_after` days (None: never stale); '' without
    a date."""
    day = verified if isinstance(verified, str) and verified else created
    if not isinstance(day, str) or len(day) < 10:
        return ""
    then = _midnight(day[:10])
    if then is None:
        return ""
    days = max(0, int(((time.time() if now is None else now) - then) // 86400))
    what = "verified" if isinstance(verified, str) and verified else "written"
    when = "today" if days == 0 else f"{days} d ago"
    if stale_after is not None and days > stale_after:
        return f"{what} {when}, may be stale"
    return f"{what} {when}"


_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _midnight(day: str) -> float | None:
    """The local midnight starting a 'YYYY-MM-DD' day, as `time.mktime(time.strptime(day, "%Y-%m-%d"))`; None
    for anything else. Not strptime: it loads `locale` and `re` (~5 ms) into the prompt hook."""
    year, month, date = day[:4], day[5:7], day[8:10]
    if len(day) != 10 or day[4] + day[7] != "--" or not (year + month + date).isdigit():
        return None
    y, m, d = int(year), int(month), int(date)
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if not (1 <= m <= 12 and 1 <= d <= _MONTH_DAYS[m - 1]) or (m == 2 and d == 29 and not leap):
        return None
    return time.mktime((y, m, d, 0, 0, 0, 0, 0, -1))


def render(rows: list[tuple], *, budget: int, stale_days: Mapping[str, int | None],
           now: float | None = None) -> str:
    """HEADER, then one line per entry — slug, type, title, gist, age (stale past its type's days, as
    every search hit says) — cut to fit `budget` chars: the gist shrinks first, then the title.
    rows: (slug, type, title, body, created, last_verified).
    '' when not even one line fits."""
    from pinky.base.shown import plain, shown  # here: most prompts recall nothing and render nothing

    lines = [HEADER]
    used = len(HEADER)
    for slug, type_, title, body, created, verified in rows:
        slug = plain(slug)  # a name on one line, whatever an index written before the gate holds
        age = age_note(created, verified, stale_days.get(type_), now)
        tail = f" ({age})" if age else ""
        room = budget - used - 1 - len(f"- {slug} [{type_}] ") - len(tail)
        if room < min(len(title), 20):
            break
        title = _one_line(shown(title), min(room, 90))  # hidden before a cut can split a key
        room -= len(title)
        text = shown(gist(title, body))
        detail = f" — {_one_line(text, room - 3)}" if text and room >= 25 else ""
        line = f"- {slug} [{type_}] {title}{detail}{tail}"
        lines.append(line)
        used += 1 + len(line)
    return "\n".join(lines) if len(lines) > 1 else ""
