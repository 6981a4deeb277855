"""A fake Hugging Face Hub: the part of its HTTP API that ``snapshot_download`` uses.

Point ``HF_ENDPOINT`` (or ``endpoint=``) at it and ``huggingface_hub`` downloads from here:

- ``GET /api/{type}s/{repo}/revision/{revision}``: repo info (its commit ``sha``, ``siblings``)
- ``GET /api/{type}s/{repo}/tree/{revision}[?recursive=true]``: the file listing
- ``HEAD``/``GET /{type}s/{repo}/resolve/{revision}/{path}`` (datasets and spaces are
  prefixed, models are not): a file, with ``X-Repo-Commit`` and ``ETag`` headers

A repo holds files (path → bytes) at one commit, whose id is a hash of its contents; a
revision is ``main`` or that commit id. An unknown repo, revision or file gets the Hub's 404
with its ``X-Error-Code``. ``requests`` lists what was asked, so a test can show that an
offline download asked nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import unquote

from voxbench.testing.http_server import HTTPServer, Request, Responder

REPO_TYPES = ("model", "dataset", "space")


@dataclass
class FakeRepo:
    """One repository: its files at one commit."""

    files: dict[str, bytes]
    repo_type: str = "dataset"
    branch: str = "main"
    commit: str = field(init=False)

    def __post_init__(self) -> None:
        digest = hashlib.sha1()
        for path in sorted(self.files):
            digest.update(path.encode() + b"\0" + hashlib.sha1(self.files[path]).digest())
        self.commit = digest.hexdigest()

    def blob_id(self, path: str) -> str:
        """The file's git blob id, as the Hub reports it (``oid``, ``ETag``)."""
        data = self.files[path]
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class FakeHubServer(HTTPServer):
    """Serves ``repos`` (``"owner/name"`` → ``FakeRepo``) like the Hub does."""

    def __init__(self, repos: dict[str, FakeRepo], host: str = "127.0.0.1", port: int = 0):
        super().__init__(host, port)
        self.repos = repos
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        """The value for ``HF_ENDPOINT``."""
        return self.origin

    async def handle(self, request: Request, responder: Responder) -> None:
        self.requests.append(f"{request.method} {request.path}")
        path = unquote(request.path)
        if path.startswith("/api/"):
            await self._api(path.removeprefix("/api/"), responder)
        elif "/resolve/" in path:
            await self._resolve(path.lstrip("/"), request.method == "HEAD", responder)
        else:
            await _not_found(responder, "EntryNotFound", f"no route {path}")

    def _repo(self, type_plural: str, rest: str) -> tuple[FakeRepo | None, str, str]:
        """``datasets`` + ``owner/name/<tail>`` → the repo, its id and the tail."""
        owner, _, remainder = rest.partition("/")
        name, _, tail = remainder.partition("/")
        repo_id = f"{owner}/{name}"
        repo = self.repos.get(repo_id)
        if repo is None or f"{repo.repo_type}s" != type_plural:
            return None, repo_id, tail
        return repo, repo_id, tail

    async def _api(self, rest: str, responder: Responder) -> None:
        type_plural, _, rest = rest.partition("/")
        repo, repo_id, tail = self._repo(type_plural, rest)
        if repo is None:
            await _not_found(responder, "RepoNotFound", f"Repository {repo_id} not found")
            return
        kind, _, rest = tail.partition("/")
        revision, _, sub = rest.partition("/")
        if kind not in ("revision", "tree") or revision not in (repo.branch, repo.commit):
            await _not_found(responder, "RevisionNotFound", f"Invalid rev id: {revision}")
            return
        if kind == "revision":
            await responder.send(
                200,
                {
                    "id": repo_id,
                    "sha": repo.commit,
                    "private": False,
                    "disabled": False,
                    "gated": False,
                    "siblings": [{"rfilename": p} for p in sorted(repo.files)],
                },
            )
            return
        await responder.send(200, _tree(repo, sub))

    async def _resolve(self, rest: str, head_only: bool, responder: Responder) -> None:
        type_plural = "models"
        first = rest.split("/", 1)[0]
        if first in ("datasets", "spaces"):
            type_plural, rest = first, rest.split("/", 1)[1]
        repo, repo_id, tail = self._repo(type_plural, rest)
        if repo is None:
            await _not_found(responder, "RepoNotFound", f"Repository {repo_id} not found")
            return
        _, _, tail = tail.partition("/")  # "resolve/"
        revision, _, file_path = tail.partition("/")
        if revision not in (repo.branch, repo.commit):
            await _not_found(responder, "RevisionNotFound", f"Invalid rev id: {revision}")
            return
        if file_path not in repo.files:
            await _not_found(responder, "EntryNotFound", f"{file_path} does not exist")
            return
        data = repo.files[file_path]
        headers = {"x-repo-commit": repo.commit, "etag": f'"{repo.blob_id(file_path)}"'}
        if head_only:
            await responder.send_head(200, {**headers, "content-length": str(len(data))})
        else:
            await responder.send(
                200, data, content_type="application/octet-stream", headers=headers
            )


def _tree(repo: FakeRepo, under: str) -> list[dict[str, object]]:
    prefix = f"{under.strip('/')}/" if under.strip("/") else ""
    folders: set[str] = set()
    entries: list[dict[str, object]] = []
    for path in sorted(repo.files):
        if not path.startswith(prefix):
            continue
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folders.add("/".join(parts[:depth]))
        entries.append(
            {"type": "file", "path": path, "size": len(repo.files[path]), "oid": repo.blob_id(path)}
        )
    entries += [
        {"type": "directory", "path": f, "oid": hashlib.sha1(f.encode()).hexdigest()}
        for f in sorted(folders)
        if f.startswith(prefix)
    ]
    return entries


async def _not_found(responder: Responder, code: str, message: str) -> None:
    await responder.send(
        404, {"error": message}, headers={"x-error-code": code, "x-error-message": message}
    )


@contextlib.contextmanager
def serving_in_background(server: HTTPServer) -> Iterator[HTTPServer]:
    """Run ``server`` on its own event loop in a thread, for blocking clients (the CLI)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


__all__ = ["FakeHubServer", "FakeRepo", "serving_in_background"]
