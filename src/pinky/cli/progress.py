"""How long work shows on stderr (never on stdout, which may carry --json).

The core reports `(phase, done, total)` often: after every file it parses and every model call that
embeds (16 chunks, under a second). On a terminal each phase gets a bar that moves with it, redrawn
when it moved by 1/200 of its length or half a second went by. Elsewhere (a log, CI, a pipe) a line
such as `pinky: embedding chunks 1,024 of 8,000 (12%), 6 s` comes every PINKY_PROGRESS_SECONDS
(default 5) while the work goes on, and a last one when a phase that printed lines ends: short work
prints nothing.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

import click

from pinky.base.locations import ENV_PROGRESS_SECONDS

Progress = Callable[[str, int, int], None]
LABELS = {"parse": "Indexing notes", "embed": "Embedding chunks", "refine": "Second stage",
          "import": "Reading sessions"}
LINE_SECONDS = 5.0
REDRAW_SECONDS = 0.5
REDRAW_PART = 200  # redraw when the bar moved by 1/200 of its length


def line_seconds() -> float:
    """Seconds between progress lines off a terminal (PINKY_PROGRESS_SECONDS; a bad value: the default)."""
    try:
        return max(0.0, float(os.environ.get(ENV_PROGRESS_SECONDS, LINE_SECONDS)))
    except ValueError:
        return LINE_SECONDS


@contextmanager
def progress_shown(stream: TextIO | None = None) -> Iterator[Progress]:
    """A `progress(phase, done, total)` callback for the core; what it showed is closed on the way out."""
    out = stream or sys.stderr
    shown: _Bars | _Lines = _Bars(out) if out.isatty() else _Lines(out, line_seconds())
    try:
        yield shown.report
    finally:
        shown.finish()


class _Bars:
    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.bars: dict[str, Any] = {}
        self.drawn: dict[str, tuple[int, float]] = {}  # phase -> (position, when) of its last redraw

    def report(self, phase: str, done: int, total: int) -> None:
        bar = self.bars.get(phase)
        if bar is None:
            label = LABELS.get(phase, phase)
            width = max(len(text) for text in LABELS.values())
            bar = self.bars[phase] = click.progressbar(length=max(total, 1), label=label.ljust(width), file=self.out)
            bar.__enter__()
            self.drawn[phase] = (0, time.monotonic())
        if total > (bar.length or 0):
            bar.length = total
        position, when = self.drawn[phase]
        now = time.monotonic()
        if done >= total or done - position >= max(1, total // REDRAW_PART) or now - when >= REDRAW_SECONDS:
            bar.update(done - bar.pos)
            self.drawn[phase] = (done, now)

    def finish(self) -> None:
        for bar in self.bars.values():
            bar.__exit__(None, None, None)


class _Lines:
    def __init__(self, out: TextIO, every: float) -> None:
        self.out, self.every = out, every
        self.last = time.monotonic()  # the first line comes `every` seconds into the command
        self.phase_started: dict[str, float] = {}
        self.open: dict[str, tuple[int, int]] = {}  # phases that printed a line and have not ended yet

    def report(self, phase: str, done: int, total: int) -> None:
        now = time.monotonic()
        began = self.phase_started.setdefault(phase, now)
        if phase in self.open and done >= total:
            self._line(phase, done, total, now - began)
            del self.open[phase]
        elif now - self.last >= self.every and done < total:
            self._line(phase, done, total, now - began)
            self.open[phase] = (done, total)

    def _line(self, phase: str, done: int, total: int, seconds: float) -> None:
        label = LABELS.get(phase, phase).lower()
        share = f" ({100 * done // total}%)" if total else ""
        click.echo(f"pinky: {label} {done:,} of {total:,}{share}, {seconds:.0f} s", file=self.out)
        self.out.flush()
        self.last = time.monotonic()

    def finish(self) -> None:
        self.open.clear()
