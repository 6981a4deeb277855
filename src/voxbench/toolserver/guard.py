"""Who may call a tool server: the checks every request passes before it reaches the tools.

A tool server listens for the length of a run and executes each call as the agent's own, so
a web page in the user's browser must not be able to call it (a cross-origin ``text/plain``
POST needs no preflight) and nor must another user on the machine:

- ``Host`` must name the address the server listens on (loopback names for a loopback
  server): anything else is a DNS-rebinding attempt, answered 421;
- ``Origin``, when a browser sends one, must be the server's own origin: 403;
- ``Authorization: Bearer TOKEN`` must carry the run's token (``tools serve`` prints it, or
  takes it from ``VOXBENCH_TOOLS_TOKEN``): 401;
- a POST's body must be declared ``application/json``: 415.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
from dataclasses import dataclass
from urllib.parse import urlsplit

TOKEN_ENV = "VOXBENCH_TOOLS_TOKEN"
"""Set it to choose the run's token (an agent started beforehand already knows it)."""

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARD_HOSTS = ("", "0.0.0.0", "::")


def new_token() -> str:
    """The run's bearer token: ``VOXBENCH_TOOLS_TOKEN`` when set, else a fresh random one."""
    chosen = os.environ.get(TOKEN_ENV, "").strip()
    return chosen or secrets.token_urlsafe(24)


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address) is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` (``[v6]:port`` for IPv6) → (lower-case host, port); None if malformed."""
    try:
        parts = urlsplit(f"//{value.strip()}")
        return (parts.hostname or "").lower(), parts.port
    except ValueError:
        return None


@dataclass
class Refusal:
    """An answer given instead of the tool's: status, a message, extra headers."""

    status: int
    message: str
    headers: dict[str, str]


@dataclass
class RequestGuard:
    """The checks of one server listening on ``bind_host``:``port`` for the run's ``token``."""

    bind_host: str
    port: int
    token: str

    def _hosts(self) -> set[str] | None:
        """Host names a request may address; None: any (a server bound to every address)."""
        if self.bind_host in WILDCARD_HOSTS:
            return None
        names = {self.bind_host.lower().strip("[]")}
        if is_loopback(self.bind_host):
            names |= set(LOOPBACK_NAMES)
        return names

    def _addressed_here(self, value: str) -> bool:
        parsed = _split_host(value)
        if parsed is None:
            return False
        host, port = parsed
        allowed = self._hosts()
        return bool(host) and port == self.port and (allowed is None or host in allowed)

    def check(self, method: str, headers: dict[str, str]) -> Refusal | None:
        """None when the request (``headers`` with lower-case names) may reach the tools."""
        host = headers.get("host", "")
        if not self._addressed_here(host):
            return Refusal(421, f"this server does not answer for Host {host!r}", {})
        origin = headers.get("origin")
        if origin is not None:
            parts = urlsplit(origin) if origin != "null" else None
            same = (
                parts is not None
                and parts.scheme == "http"
                and self._addressed_here(parts.netloc)
                and (self._hosts() is not None or parts.netloc.lower() == host.lower())
            )
            if not same:
                return Refusal(403, f"cross-origin requests are refused (Origin {origin!r})", {})
        given = headers.get("authorization", "")
        scheme, _, credential = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            credential.strip().encode(), self.token.encode()
        ):
            return Refusal(
                401,
                "send the run's token: Authorization: Bearer TOKEN (printed by voxbench tools "
                f"serve; set it with {TOKEN_ENV})",
                {"WWW-Authenticate": 'Bearer realm="voxbench-tools"'},
            )
        if method == "POST":
            kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return Refusal(415, "the body must be Content-Type: application/json", {})
        return None
