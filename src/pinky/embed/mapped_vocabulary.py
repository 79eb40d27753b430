"""The default tokenizer's vocabulary as one file, read in one go and looked up in place.

The library's tokenizer keeps two tables: a dict of ~250,000 prefixes (piece id + 1 for a piece, 0 for a
prefix that only keeps the walk going) and a list of 128,000 pieces. Rebuilding them from any file costs
~0.2 s, a third of a one-shot `pinky search`, and a query looks at a few dozen entries. Here they are an
open-addressing hash table (CRC-32 of the key's UTF-8, linear probing, at most half full) and two string
blobs with their offsets; `MappedPrefixes.get` and `MappedPieces[i]` look up the bytes in place. Same
answers as the dict and the list, so the same tokens: the cache's probe vectors check it bit for bit.

The file is read whole into this process's memory (8 MB, a few ms) and checked against the CRC-32 its
header holds before anything is looked up: a damaged file (bytes flipped, truncated) is refused with a
ValueError, and the cache rebuilds it, instead of an IndexError in the tokenizer or silently other tokens.
It is not memory-mapped: another process truncating a mapped file kills the reader with SIGBUS (a running
pinky-mcp), while a private copy cannot change under it.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from zlib import crc32

MAGIC = b"PNKVOC2" + sys.byteorder[0].encode()  # the arrays are in this machine's byte order
_HEADER = 6  # after the magic: keys, slots, pieces, key bytes, piece bytes, CRC-32 of the rest (uint64 each)


def write(path: Path, prefixes: dict[str, int], pieces: Sequence[str]) -> None:
    """Write both tables to `path` (one file, read back by `read`)."""
    keys = [key.encode("utf-8") for key in prefixes]
    slots = 1 << max(4, (2 * len(keys)).bit_length())  # load factor <= 0.5: ~1.5 probes for a miss
    table, mask = array("I", bytes(4 * slots)), slots - 1
    for number, key in enumerate(keys, 1):
        at = crc32(key) & mask
        while table[at]:
            at = (at + 1) & mask
        table[at] = number
    key_offsets, key_blob = _packed(keys)
    piece_offsets, piece_blob = _packed(piece.encode("utf-8") for piece in pieces)
    values = array("i", prefixes.values())
    if table.itemsize != 4 or values.itemsize != 4:
        raise OSError("this platform's C int is not 32 bits")
    body = (table, key_offsets, values, piece_offsets, key_blob, piece_blob)
    checksum = 0
    for part in body:
        checksum = crc32(part, checksum)
    header = array("Q", [len(keys), slots, len(piece_offsets) - 1, len(key_blob), len(piece_blob), checksum])
    with open(path, "wb") as handle:
        for part in (MAGIC, header, *body):
            handle.write(part)


def _packed(strings: Iterable[bytes]) -> tuple[array[int], bytes]:
    items = list(strings)
    offsets, total = array("I", [0]), 0
    for item in items:
        total += len(item)
        offsets.append(total)
    return offsets, b"".join(items)


def read(path: Path) -> tuple[MappedPrefixes, MappedPieces]:
    """The two tables of a file `write` made; ValueError when it is not one, or not whole and as written."""
    data = path.read_bytes()  # a private copy: nothing another process does to the file can reach it
    at = len(MAGIC) + 8 * _HEADER
    if data[:len(MAGIC)] != MAGIC:
        raise ValueError(f"{path.name} is not a vocabulary of this format and byte order")
    if len(data) < at:
        raise ValueError(f"{path.name} is truncated")
    view = memoryview(data)
    n_keys, n_slots, n_pieces, key_bytes, piece_bytes, checksum = view[len(MAGIC):at].cast("Q")
    if crc32(view[at:]) != checksum:
        raise ValueError(f"{path.name} is damaged: its bytes do not match the checksum written with them")
    parts = []
    for count in (n_slots, n_keys + 1, n_keys, n_pieces + 1):
        parts.append(view[at:at + 4 * count])
        at += 4 * count
    if at + key_bytes + piece_bytes != len(data):
        raise ValueError(f"{path.name} is truncated or padded")
    slots, key_offsets, piece_offsets = (part.cast("I") for part in (parts[0], parts[1], parts[3]))
    values = parts[2].cast("i")
    prefixes = MappedPrefixes(slots, key_offsets, values, data, at)
    return prefixes, MappedPieces(piece_offsets, data, at + key_bytes)


class MappedPrefixes:
    """The tokenizer's `prefix -> value` dict, read-only: `get` is all the tokenizer calls."""

    __slots__ = ("_blob", "_mask", "_offsets", "_slots", "_start", "_values")

    def __init__(self, slots: memoryview, offsets: memoryview, values: memoryview, blob: bytes,
                 start: int) -> None:
        self._slots, self._offsets, self._values = slots, offsets, values
        self._blob, self._start, self._mask = blob, start, len(slots) - 1

    def get(self, key: str, default: int | None = None) -> int | None:
        raw = key.encode("utf-8")
        slots, offsets, blob, start, mask = self._slots, self._offsets, self._blob, self._start, self._mask
        at = crc32(raw) & mask
        while number := slots[at]:
            if blob[start + offsets[number - 1]:start + offsets[number]] == raw:
                return int(self._values[number - 1])
            at = (at + 1) & mask
        return default

    def __len__(self) -> int:
        return len(self._values)

    def to_dict(self) -> dict[str, int]:
        """The whole table as the library's dict, in the order it was written."""
        offsets, start = self._offsets, self._start
        raw = self._blob[start:start + offsets[len(offsets) - 1]]
        keys = [raw[offsets[k]:offsets[k + 1]].decode("utf-8") for k in range(len(offsets) - 1)]
        return dict(zip(keys, self._values.tolist(), strict=True))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def __getitem__(self, key: str) -> int:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value


class MappedPieces(Sequence[str]):
    """The tokenizer's list of pieces (id -> text), read-only."""

    def __init__(self, offsets: memoryview, blob: bytes, start: int) -> None:
        self._offsets, self._blob, self._start = offsets, blob, start

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def __getitem__(self, index: int) -> str:  # type: ignore[override]  # ids only, no slices
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        start = self._start
        return self._blob[start + self._offsets[index]:start + self._offsets[index + 1]].decode("utf-8")
