"""The try-it pages of `lynxc dev --transport http`: `GET /` (an index of the served servers),
`GET /{name}/` (a page where a person picks a tool, fills a form generated from its input schema
and calls it) and `GET /-/{asset}` (the page's script, styles and the bundled JSON Schema
validator, all served from this package: the page makes no request off this server).

The page is a plain MCP client: it speaks Streamable HTTP to `/{name}/mcp` from the browser
like any other client, with no side door into the front (tryit/tryit.js). Its Content-Security-
Policy allows scripts, styles and fetches from this origin only, and no `eval` (hence a
validator that interprets schemas, @cfworker/json-schema, rather than one that compiles them)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

ASSETS = Path(__file__).with_name("tryit")
ASSET_PREFIX = "/-/"

# Strict: nothing but this origin; no inline script or style, no eval, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
CONTENT_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    "": "text/plain; charset=utf-8",  # LICENSE
}


def asset_files() -> dict[str, Path]:
    """Every file the pages may load, by its URL path under /-/: a fixed list read once, so a
    request can only ever name one of them (no path is joined from the URL)."""
    found = {}
    for path in sorted(ASSETS.rglob("*")):
        if path.is_file() and path.suffix in CONTENT_TYPES and path.suffix != ".j2":
            found[path.relative_to(ASSETS).as_posix()] = path
    return found


def tryit_routes(servers: Iterable[str]) -> list[Any]:
    """Starlette routes for the index, each server's page and the assets. Mount them after
    the MCP endpoints' routes (`/{name}/mcp`, `/mcp`), which they do not shadow."""
    from jinja2 import Environment, FileSystemLoader, select_autoescape
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, RedirectResponse, Response
    from starlette.routing import Route

    names = list(servers)
    env = Environment(
        loader=FileSystemLoader(ASSETS),
        autoescape=select_autoescape(default=True),
        keep_trailing_newline=True,
    )
    files = asset_files()
    cached: dict[str, bytes] = {}

    def html(template: str, status: int = 200, **values: Any) -> HTMLResponse:
        text = env.get_template(template).render(assets=ASSET_PREFIX, servers=names, **values)
        return HTMLResponse(text, status_code=status, headers=PAGE_HEADERS)

    async def index(request: Request) -> Response:
        return html("index.html.j2")

    async def page(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in names:
            return html("missing.html.j2", status=404, name=name)
        return html("page.html.j2", name=name, endpoint=f"/{name}/mcp")

    async def bare(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in names:
            return html("missing.html.j2", status=404, name=name)
        return RedirectResponse(f"/{name}/", status_code=308)

    async def asset(request: Request) -> Response:
        key = request.path_params["path"]
        path = files.get(key)
        if path is None:
            return Response("no such asset\n", status_code=404, media_type="text/plain")
        if key not in cached:
            cached[key] = path.read_bytes()
        headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "no-cache"}
        return Response(cached[key], media_type=CONTENT_TYPES[path.suffix], headers=headers)

    return [
        Route("/", index, methods=["GET", "HEAD"]),
        Route(ASSET_PREFIX + "{path:path}", asset, methods=["GET", "HEAD"]),
        Route("/{name}/", page, methods=["GET", "HEAD"]),
        Route("/{name}", bare, methods=["GET", "HEAD"]),
    ]
