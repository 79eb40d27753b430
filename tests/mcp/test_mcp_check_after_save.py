"""brain_check sees what the same pinky-mcp just acknowledged (issue 29, item 7).

brain_save indexes a note's full text at once and leaves its vectors to the server's background fill;
brain_check compares notes by their stored vectors, so a check that ran before the fill missed a pair
the server had just acknowledged (1 run in 3 reported count 0). The default embedder, not the hashing
one: its model takes a while to load in the background, which is the window the check fell into."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import RawServer

ROUNDS = 12
SERVICES = ("billing", "search", "upload", "gateway", "metrics", "auth", "mailer", "export", "cache",
            "queue", "ledger", "reports")


def test_a_check_right_after_two_saves_sees_their_contradiction(tmp_path: Path) -> None:
    missed = []
    with RawServer(tmp_path, PINKY_HASH_EMBED="0") as server:
        server.initialize()
        for service in SERVICES[:ROUNDS]:
            first = server.call("brain_save", title=f"API port of the {service} service", type="decision",
                                body=f"The {service} service API listens on port 8080 in every environment.")
            second = server.call("brain_save", title=f"API port of the {service} service (ops)", type="decision",
                                 body=f"The {service} service API listens on port 9090 in every environment.")
            assert not first["isError"] and not second["isError"], (first, second)
            slug = second["structuredContent"]["slug"]
            checked = server.call("brain_check", slug=slug)
            assert not checked["isError"], checked
            pairs = checked["structuredContent"]["pairs"]
            if not any("8080" in str(p) and "9090" in str(p) for p in pairs):
                missed.append((service, checked["structuredContent"]))
    assert not missed, f"{len(missed)} of {ROUNDS} checks missed the pair just saved: {missed[:2]}"
