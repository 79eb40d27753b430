"""`pinky view`'s web application: the page, its static files, a JSON API over `Brain`, behind `Guard`.

The page is one HTML shell and a script that draws every view from the JSON API with text nodes (never
markup made from a note's text); markdown is rendered in the page by markdown-it with raw HTML off.
Static files are served from a fixed list made at start (the package's `static/` folder), files of
the brain only through `KnowledgeBase.graph.read_file` (inside a root, never hidden, never through a
link out). Every string of every JSON answer (of the whole-brain picture: its titles, in the core) and
every text file downloaded goes through `pinky.base.shown`, as MCP results do: a credential in a
hand-written or pulled note is hidden here as everywhere pinky shows a note. Starlette and uvicorn come
with the MCP SDK; this module is imported by `pinky view` alone.
"""

from __future__ import annotations

import json
import mimetypes
from importlib import resources
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from pinky.base.declare import fields_of
from pinky.base.operations import SearchRequest, Selection
from pinky.base.shown import shown, shown_all
from pinky.errors import Conflict, InvalidInput, NotFound, PinkyError
from pinky.view.brain import Brain
from pinky.view.guard import Guard, Keys

SEARCH_LIMIT = 20
MAX_BODY_BYTES = 64 * 1024
STATUS = {NotFound: 404, Conflict: 409, InvalidInput: 400}


def static_files() -> dict[str, tuple[bytes, str]]:
    """name -> (bytes, content type) of every file the page may load, read once at start."""
    found: dict[str, tuple[bytes, str]] = {}
    base = resources.files("pinky.view") / "static"

    def walk(folder: Any, prefix: str) -> None:
        for item in folder.iterdir():
            if item.is_dir():
                walk(item, f"{prefix}{item.name}/")
            elif not item.name.endswith((".md", ".LICENSE")):
                kind = mimetypes.guess_type(item.name)[0] or "application/octet-stream"
                found[prefix + item.name] = (item.read_bytes(), kind + ("; charset=utf-8" if kind.startswith(
                    ("text/", "application/javascript")) else ""))
    walk(base, "")
    return found


def create_app(brain: Brain, port: int, keys: Keys) -> Guard:
    files = static_files()
    shell = files.pop("index.html")[0].decode()

    def page(request: Request) -> Response:  # open to anyone (the Guard): no data, no secret; the script signs in
        return Response(shell, media_type="text/html; charset=utf-8")

    def static(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None:
            return JSONResponse({"error": "no such file"}, status_code=404)
        return Response(found[0], media_type=found[1])

    def raw(request: Request) -> Response:
        data = brain.read_file(request.path_params["root"], request.path_params["rel"])
        kind = mimetypes.guess_type(request.path_params["rel"])[0] or "application/octet-stream"
        if not kind.startswith("image/") or kind == "image/svg+xml":  # an SVG may carry scripts: a download
            return Response(_shown_bytes(data), media_type="application/octet-stream",
                            headers={"content-disposition": "attachment"})
        return Response(data, media_type=kind)

    routes = [
        Route("/", page),
        Route("/static/{name:path}", static),
        Route("/raw/{root}/{rel:path}", _errors(raw)),
        Route("/api/about", _json(lambda r: brain.about())),
        Route("/api/search", _json(lambda r: _search(brain, r))),
        Route("/api/note", _json(lambda r: brain.note(_arg(r, "slug")))),
        Route("/api/timeline", _json(lambda r: brain.timeline(_arg(r, "slug")))),
        Route("/api/graph", _json(lambda r: brain.neighbourhood(_arg(r, "slug"), _int(r, "depth", 1, 1, 3)))),
        Route("/api/overview", _json(lambda r: brain.overview(r.query_params.get("cluster") or None), walk=False)),
        Route("/api/review", _json(lambda r: brain.review(_int(r, "limit", 50, 1, 500)))),
        Route("/api/contradictions", _json(lambda r: brain.contradictions())),
        Route("/api/past-sessions", _json(lambda r: brain.past_sessions())),
        Route("/api/duplicates", _json(lambda r: brain.duplicates())),
        Route("/api/diary", _json(lambda r: brain.diary(_int(r, "offset", 0, 0, 10**6)))),
        Route("/api/actions", _json(lambda r: {"actions": brain.actions()})),
        Route("/api/verify", _change(lambda b: brain.verify(_field(b, "slug"))), methods=["POST"]),
        Route("/api/archive", _change(lambda b: brain.archive(_field(b, "slug"), _field(b, "reason"))),
              methods=["POST"]),
        Route("/api/supersede", _change(lambda b: brain.supersede(_field(b, "old"), _field(b, "new"))),
              methods=["POST"]),
        Route("/api/merge", _change(lambda b: brain.merge(_field(b, "keep"), _field(b, "other"))), methods=["POST"]),
        Route("/api/dismiss", _change(lambda b: brain.dismiss_candidate(_field(b, "id"))), methods=["POST"]),
        Route("/api/undo", _change(lambda b: brain.undo(_id(b))), methods=["POST"]),
    ]
    return Guard(Starlette(routes=routes), port, keys)


def _search(brain: Brain, request: Request) -> dict[str, Any]:
    """A search (or, without `q`, the latest entries) narrowed by the request's fields, each given under its
    CLI flag's name (`type`, `tag` repeated, `all=1`: pinky.base.operations)."""
    fields = _fields(request, SearchRequest)
    query = request.query_params.get("q", "").strip()
    if not query:
        return {**brain.recent(Selection(**_fields(request, Selection)), 50), "query": ""}
    limit = _int(request, "limit", SEARCH_LIMIT, 1, 100)
    return {**brain.search(SearchRequest(query, **{**fields, "limit": limit})), "query": query}


def _fields(request: Request, kind: type) -> dict[str, Any]:
    """The fields of a request type the page sent, as query parameters named after their CLI flags; a
    number (the limit) is read on its own, with its bounds."""
    params, found = request.query_params, dict[str, Any]()
    for field in fields_of(kind):
        name = field.spec.flag.removeprefix("--")
        if not name or field.scalar is int:
            continue
        if field.many:
            found[field.name] = [value for value in params.getlist(name) if value] or None
        elif field.scalar is bool:
            found[field.name] = params.get(name) == "1"
        elif params.get(name):
            found[field.name] = params[name]
    return {name: value for name, value in found.items() if value is not None}


def _shown_bytes(data: bytes) -> bytes:
    """A text file (a note's markdown) as pinky shows it, credentials hidden; any other file as it is."""
    try:
        return shown(data.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        return data


def _arg(request: Request, name: str) -> str:
    value = request.query_params.get(name, "")
    if not value.strip():
        raise InvalidInput(f"{name} is required")
    return value


def _int(request: Request, name: str, default: int, low: int, high: int) -> int:
    text = request.query_params.get(name)
    try:
        value = default if text is None else int(text)
    except ValueError:
        raise InvalidInput(f"{name} must be a whole number") from None
    if not low <= value <= high:
        raise InvalidInput(f"{name} must be from {low} to {high}")
    return value


def _field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} is required")
    return value


def _id(body: dict[str, Any]) -> int:
    value = body.get("id")
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput("id must be the number of a change")
    return value


def _failure(exc: Exception) -> JSONResponse:
    status = next((code for kind, code in STATUS.items() if isinstance(exc, kind)), 500 if not isinstance(
        exc, PinkyError) else 400)
    return JSONResponse({"error": str(exc)}, status_code=status)


def _errors(handler: Any) -> Any:
    def run(request: Request) -> Response:
        try:
            return handler(request)
        except PinkyError as exc:
            return _failure(exc)
    return run


def _json(handler: Any, *, walk: bool = True) -> Any:
    """A JSON answer, every string of it through `shown`. `walk=False` for the whole-brain picture alone: its
    titles come redacted from the core (`graph.overview`), its other strings are slugs, types and relations
    (shown as `pinky graph` shows them), and walking its ~20,000 strings at 10,000 notes took 0.3-0.8 s."""
    if not walk:
        return _errors(lambda request: JSONResponse(handler(request)))
    return _errors(lambda request: JSONResponse(shown_all(handler(request))))


def _change(handler: Any) -> Any:
    async def run(request: Request) -> Response:
        raw = await _bounded_body(request)
        if raw is None:
            return JSONResponse({"error": f"request too large (at most {MAX_BODY_BYTES // 1024} KB)"}, status_code=413)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        if not isinstance(body, dict):
            return JSONResponse({"error": "the body is a JSON object"}, status_code=400)
        if not _unicode_only(body):
            return JSONResponse({"error": "the body holds text that is not valid Unicode (a lone surrogate)"},
                                status_code=400)
        from starlette.concurrency import run_in_threadpool

        try:
            return JSONResponse(shown_all(await run_in_threadpool(handler, body)))
        except PinkyError as exc:
            return _failure(exc)
    return run


async def _bounded_body(request: Request) -> bytes | None:
    """The request's body, or None when it is over `MAX_BODY_BYTES`: a Content-Length over it is refused
    before a byte is read, and a body sent without one (chunked) is read in chunks up to the limit alone."""
    declared = request.headers.get("content-length", "0")
    if not declared.isdigit() or int(declared) > MAX_BODY_BYTES:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _unicode_only(value: Any) -> bool:
    """Every string (key or value) in a parsed JSON body encodes as UTF-8: JSON's `\\ud800` escapes can
    make a lone surrogate, which no file, database or answer can hold."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_unicode_only(k) and _unicode_only(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_unicode_only(v) for v in value)
    return True
