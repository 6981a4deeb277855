"""The local web viewer: leaderboard, runs, run explorer, compare, artifacts.

``create_app(root, store)`` builds a Starlette app that serves the runs under ``root``;
``serve`` runs it with uvicorn on 127.0.0.1. The pages are server-rendered Jinja2 with
autoescaping; the small script and stylesheet ship in the package (no CDN). A run is
found by its id in the results store, and only when its directory lies under ``root``.
"""

from __future__ import annotations

import errno
import logging
import re
import socket
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import escape
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from voxbench.core.errors import ConfigError, VoxbenchError
from voxbench.core.secrets import redact_text
from voxbench.report.audio_links import AudioLinks
from voxbench.report.html import render_compare_html, render_run_html
from voxbench.report.tasks_html import render_tasks_html
from voxbench.store import RunFilters, RunRow, Store
from voxbench.store.readers import signature_of
from voxbench.store.store import Pick
from voxbench.viewer import LOOPBACK
from voxbench.viewer.pages import SERVED, Links, boards, compare_page, run_page
from voxbench.viewer.paths import OutsideServedDirectory, inside, resolve_inside

log = logging.getLogger(__name__)

REINDEX_EVERY_S = 3.0
"""A page that lists runs re-indexes the served directory at most this often."""
TEXT_ARTIFACTS = frozenset({".json", ".jsonl", ".md", ".txt", ".csv", ".log", ".yaml", ".yml"})
"""Artifacts served redacted, as plain text."""
PAGE_ARTIFACTS = frozenset({".html", ".htm", ".svg", ".xhtml", ".xml"})
"""Artifacts a browser would run: served redacted and sandboxed (their scripts run in an
origin of their own, away from the viewer's pages and data)."""
CONTENT_POLICY = (
    # Nothing is loaded from elsewhere: a page that tried would be blocked.
    "default-src 'self' data: blob:; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

_templates = Environment(
    loader=PackageLoader("voxbench.viewer", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
)


class Viewer:
    """The state behind the routes: the served root and the results store."""

    def __init__(self, root: Path, store: Store) -> None:
        self.root = root.resolve()
        self.store = store
        self._indexed_at = 0.0
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Index new and changed runs (at most every ``REINDEX_EVERY_S``)."""
        with self._lock:
            if time.monotonic() - self._indexed_at < REINDEX_EVERY_S:
                return
            report = self.store.index_tree(self.root)
            self._indexed_at = time.monotonic()
        for skipped in report.skipped:
            log.info("not shown: %s", skipped.reason)

    def run(self, run_id: str) -> RunRow | None:
        """The run with this id, as its files are now, when its directory is one this
        viewer serves."""
        row = self.store.get(run_id)
        if row is None:
            self.refresh()
            row = self.store.get(run_id)
        if row is None or not inside(self.root, row.run_path):
            return None
        if signature_of(row.run_path) != row.signature:  # a turn landed, the run ended
            self.store.index_run(row.run_path)
            row = self.store.get(run_id) or row
        return row

    # -- pages ----------------------------------------------------------------------------

    def leaderboard(self, request: Request) -> Response:
        self.refresh()
        q = request.query_params
        filters = RunFilters(
            benchmark=q.get("benchmark") or None,
            mode=q.get("mode") or None,
            judge=q.get("judge") or None,
            since=q.get("since") or None,
            until=q.get("until") or None,
        )
        pick: Pick = "best" if q.get("pick") == "best" else "latest"
        rows = self.store.leaderboard(filters, pick=pick)
        choices = self.store.choices()
        served = {c.run_id for c in rows if c.path and inside(self.root, Path(c.path))}
        return _page(
            "leaderboard.html",
            boards=boards(rows),
            noted=any(r.note for r in rows),
            served=served,
            filters=filters,
            pick=pick,
            choices=choices,
            runs=self.store.count(),
        )

    def runs(self, request: Request) -> Response:
        self.refresh()
        q = request.query_params
        rows = self.store.runs(
            RunFilters(benchmark=q.get("benchmark") or None, target=q.get("target") or None)
        )
        # Runs indexed from elsewhere (an FDB scoring beside its corpus) are listed, unlinked:
        # this viewer serves only the files under its own folder.
        served = {r.run_id for r in rows if inside(self.root, r.run_path)}
        return _page("runs.html", runs=rows, served=served, root=self.root)

    def run_page(self, request: Request) -> Response:
        row = self.run(request.path_params["run_id"])
        if row is None:
            return _not_found("no such run")
        try:
            if row.kind == "tasks":  # its players play the clips copied into the run
                html = render_tasks_html(row.run_path)
            else:
                html = render_run_html(row.run_path)
        except VoxbenchError as exc:  # a run the report cannot show yet: the viewer's page
            log.info("no HTML report for %s: %s", row.run_id, exc)
        else:
            return _html(_in_viewer(redact_text(html), row))
        return _page("run.html", page=run_page(row), live=_live_url(row))

    def run_slash(self, request: Request) -> Response:
        # The run page lives at /run/<id>/ so the report's relative audio links resolve.
        run_id = quote(request.path_params["run_id"], safe="")
        return RedirectResponse(f"/run/{run_id}/", status_code=308)

    def artifact(self, request: Request) -> Response:
        row = self.run(request.path_params["run_id"])
        if row is None:
            return _not_found("no such run")
        try:
            file = resolve_inside(row.run_path, request.path_params["path"], root=self.root)
        except (OutsideServedDirectory, FileNotFoundError, OSError):
            return _not_found("no such file in this run")
        suffix = file.suffix.lower()
        if suffix in TEXT_ARTIFACTS or suffix in PAGE_ARTIFACTS:
            text = redact_text(file.read_text(encoding="utf-8", errors="replace"))
            if suffix in TEXT_ARTIFACTS:
                return Response(text, media_type="text/plain; charset=utf-8")
            return Response(
                text,
                media_type="image/svg+xml" if suffix == ".svg" else "text/html; charset=utf-8",
                headers={"Content-Security-Policy": CONTENT_POLICY + "; sandbox allow-scripts"},
            )
        # FileResponse answers Range requests, so an <audio> element can seek.
        return FileResponse(file)

    def status(self, request: Request) -> Response:
        row = self.run(request.path_params["run_id"])
        if row is None:
            return JSONResponse({"error": "no such run"}, status_code=404)
        return JSONResponse(
            {
                "run_id": row.run_id,
                "status": row.status,
                "signature": row.signature,
                "live": _live(row),
            }
        )

    def compare(self, request: Request) -> Response:
        q = request.query_params
        a, b = self.run(q.get("a", "")), self.run(q.get("b", ""))
        if a is None or b is None:
            return _not_found("compare needs two runs: /compare?a=RUN_ID&b=RUN_ID")
        # The players link to each run's files where this viewer serves them.
        links = AudioLinks.served(
            {
                a.run_path: f"/run/{quote(a.run_id, safe='')}/",
                b.run_path: f"/run/{quote(b.run_id, safe='')}/",
            }
        )
        try:
            return _html(redact_text(render_compare_html(a.run_path, b.run_path, links=links)))
        except VoxbenchError as exc:
            log.info("no HTML comparison of %s and %s: %s", a.run_id, b.run_id, exc)
        return _page("compare.html", page=compare_page(a, b))


def create_app(
    root: str | Path, store: Store, *, allowed_hosts: list[str] | None = None
) -> Starlette:
    """The viewer's web app over the runs under ``root``."""
    root = Path(root)
    if not root.is_dir():
        raise ConfigError("no such directory", file=root, field="DIR", expected="a runs directory")
    viewer = Viewer(root, store)
    viewer.refresh()
    hosts = allowed_hosts or [LOOPBACK, "localhost"]
    app = Starlette(
        routes=[
            Route("/", viewer.leaderboard),
            Route("/runs", viewer.runs),
            Route("/compare", viewer.compare),
            Route("/api/run/{run_id}/status", viewer.status),
            Route("/run/{run_id}", viewer.run_slash),
            Route("/run/{run_id}/", viewer.run_page),
            Route("/run/{run_id}/{path:path}", viewer.artifact),
            Mount("/static", StaticFiles(packages=[("voxbench.viewer", "static")]), name="static"),
        ],
        # A web page elsewhere cannot reach the viewer through a rebound DNS name.
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=hosts),
            Middleware(_SecurityHeaders),
        ],
    )

    return app


def serve(root: str | Path, store: Store, *, port: int = 8765, host: str = LOOPBACK) -> None:
    """Serve the viewer until interrupted.

    The socket is bound here, before uvicorn starts, so a port already in use is a user
    error naming ``--port`` (exit 2), not uvicorn's start-up failure (its exit 3 reads as a
    rejected credential in voxbench's table of exit codes).
    """
    import uvicorn

    sock = bind_listening_socket(host, port)
    hosts = [LOOPBACK, "localhost"] if host == LOOPBACK else ["*"]
    config = uvicorn.Config(create_app(root, store, allowed_hosts=hosts), log_level="warning")
    with sock:
        uvicorn.Server(config).run(sockets=[sock])


def bind_listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` and listening, or a ``ConfigError`` naming why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = (
            "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror})"
        )
        raise ConfigError(
            f"port {port} on {host} {reason}",
            field="--port",
            expected="a free port (e.g. --port 8766)",
        ) from None
    return sock


class _SecurityHeaders:
    """ASGI middleware: every response carries ``SECURITY_HEADERS``."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                for key, value in SECURITY_HEADERS.items():
                    if key.lower().encode() not in present:
                        headers.append((key.lower().encode(), value.encode()))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_headers)


# -- helpers -------------------------------------------------------------------------------


def _live(row: RunRow) -> bool:
    return row.status in ("started", "running")


def _live_url(row: RunRow) -> str:
    return f"/api/run/{quote(row.run_id, safe='')}/status"


def nav_bar(links: Links = SERVED) -> str:
    """The viewer's bar, put atop a run's own report (styled inline: the report has its own
    CSS)."""
    link = "color:#e5e7eb;text-decoration:none"
    return (
        '<nav style="display:flex;flex-wrap:wrap;gap:1.2em;align-items:baseline;'
        'padding:.6em 1.5em;background:#111827;font-family:system-ui,sans-serif">'
        f'<a href="{escape(links.home)}" style="color:#fff;font-weight:700;text-decoration:none;'
        f'margin-right:1em">voxbench</a><a href="{escape(links.home)}" style="{link}">'
        f'Leaderboard</a><a href="{escape(links.runs)}" style="{link}">Runs</a></nav>'
    )


def after_body(html: str, fragment: str) -> str:
    """``html`` with ``fragment`` first inside its ``<body>``."""
    body = re.search(r"<body[^>]*>", html, flags=re.IGNORECASE)
    start = body.end() if body else 0
    return html[:start] + fragment + html[start:]


def _in_viewer(html: str, row: RunRow) -> str:
    """The report with the viewer's bar on top and its script, which reloads the page while
    the run is in progress."""
    tag = (
        f'<script src="/static/viewer.js" data-live="{escape(_live_url(row))}" '
        f'data-status="{escape(row.status)}"></script>'
    )
    lower = html.lower()
    at = lower.rfind("</body>")
    html = html[:at] + tag + html[at:] if at >= 0 else html + tag
    return after_body(html, nav_bar())


def render(template: str, **values: Any) -> str:
    """A viewer template as text (links to the served routes unless ``links`` says)."""
    return _templates.get_template(template).render(**{"links": SERVED, **values})


def _page(template: str, **values: Any) -> HTMLResponse:
    return _html(render(template, **values))


def _html(text: str, status_code: int = 200) -> HTMLResponse:
    return HTMLResponse(text, status_code=status_code)


def _not_found(message: str) -> HTMLResponse:
    return HTMLResponse(render("error.html", message=message), status_code=404)
