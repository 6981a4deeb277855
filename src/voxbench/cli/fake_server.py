"""``voxbench fake-server KIND``: run a protocol-faithful fake provider in the foreground.

Kinds live in one small registry so each fake registers itself with one entry: a name, a
description, the server class as ``module:Class`` (imported only when chosen) and how to
point a target at it. A server class takes ``(script, *, faults, ttfb_ms, chunk_ms,
api_key, port)``, is an async context manager, and has a ``url``.
"""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from voxbench.cli.console import make_console
from voxbench.core.errors import ConfigError


@dataclass(frozen=True)
class FakeServerKind:
    """One kind of fake server."""

    name: str
    description: str
    server: str
    """``module:Class`` of the server."""
    usage: str
    """How to point a run at it; ``{url}`` is replaced by the server's URL."""


FAKE_SERVER_KINDS: dict[str, FakeServerKind] = {}


def register_fake_server(kind: FakeServerKind) -> None:
    """Add (or replace) a kind."""
    FAKE_SERVER_KINDS[kind.name] = kind


register_fake_server(
    FakeServerKind(
        "openai",
        "OpenAI-compatible HTTP: /v1/chat/completions, /v1/audio/transcriptions, /v1/audio/speech",
        "voxbench.testing.openai_http:FakeOpenAIServer",
        "OPENAI_API_KEY=dummy voxbench run smoke --target openai/gpt-4o-mini --base-url {url}",
    )
)
register_fake_server(
    FakeServerKind(
        "anthropic",
        "Anthropic Messages API: /v1/messages (streaming, tools)",
        "voxbench.testing.anthropic_http:FakeAnthropicServer",
        "ANTHROPIC_API_KEY=dummy voxbench run smoke --target anthropic/claude-sonnet-4-5 --base-url {url}",
    )
)
register_fake_server(
    FakeServerKind(
        "gemini",
        "Gemini API: models/<m>:generateContent and :streamGenerateContent (function calling)",
        "voxbench.testing.gemini_http:FakeGeminiServer",
        "GEMINI_API_KEY=dummy voxbench run smoke --target gemini/gemini-2.5-flash --base-url {url}",
    )
)
register_fake_server(
    FakeServerKind(
        "openai-realtime",
        "OpenAI Realtime (GA) websocket: /v1/realtime?model=<m>, manual commits or server VAD",
        "voxbench.testing.openai_realtime:FakeOpenAIRealtimeServer",
        "OPENAI_API_KEY=dummy voxbench run smoke --target openai-realtime/gpt-realtime "
        "--base-url {url}",
    )
)
register_fake_server(
    FakeServerKind(
        "gemini-live",
        "Gemini Live websocket: BidiGenerateContent (setup, clientContent, realtimeInput, toolCall)",
        "voxbench.testing.gemini_live:FakeGeminiLiveServer",
        "GEMINI_API_KEY=dummy voxbench run smoke --target gemini-live/gemini-3.1-flash-live-preview "
        "--base-url {url}",
    )
)
register_fake_server(
    FakeServerKind(
        "ultravox",
        "Ultravox: POST /api/calls, then the call's websocket (data messages + binary audio)",
        "voxbench.testing.ultravox:FakeUltravoxServer",
        "ULTRAVOX_API_KEY=dummy voxbench run smoke --target ultravox/ultravox-v0.7 --base-url {url}",
    )
)
register_fake_server(
    FakeServerKind(
        "nova-sonic",
        "Amazon Nova Sonic: Bedrock's InvokeModelWithBidirectionalStream over h2c (signed AWS "
        "event stream)",
        "voxbench.testing.nova_sonic:FakeNovaSonicServer",
        "AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x voxbench run smoke "
        "--target nova-sonic/amazon.nova-2-sonic-v1:0 --mode audio --base-url {url}",
    )
)
register_fake_server(
    FakeServerKind(
        "websocket",
        "A voice agent speaking the voxbench agent protocol (docs/agent-protocol.md) at /agent",
        "voxbench.testing.agent_ws:FakeAgentServer",
        "voxbench run smoke --target websocket/{url}",
    )
)
register_fake_server(
    FakeServerKind(
        "twilio-stream",
        "A telephony bot serving Twilio Media Streams (μ-law 8 kHz) at /media",
        "voxbench.testing.twilio_bot:FakeTwilioBot",
        "voxbench run smoke --target twilio-stream/{url} --mode audio",
    )
)
register_fake_server(
    FakeServerKind(
        "bedrock",
        "Amazon Bedrock runtime: /model/<id>/converse-stream (AWS event stream) and /converse",
        "voxbench.testing.bedrock_http:FakeBedrockServer",
        "AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x voxbench run smoke "
        "--target bedrock/anthropic.claude-3-5-haiku --base-url {url}",
    )
)


LENIENT_KINDS = frozenset({"openai-realtime", "gemini-live", "ultravox", "bedrock", "nova-sonic"})
"""Fakes that can be told to accept what the real service refuses (the others always refuse)."""
DIALECTS = {"openai-realtime": ("openai", "xai")}
"""Fakes that speak more than one provider's variant of their protocol."""


def build_fake_server(
    kind: str,
    script: str = "golden:smoke",
    *,
    faults: list[str] | None = None,
    ttfb_ms: float = 0.0,
    chunk_ms: float = 0.0,
    api_key: str | None = None,
    port: int = 0,
    strict: bool = True,
    dialect: str | None = None,
) -> Any:
    """Build (not start) the fake server of ``kind`` driven by ``script``.

    ``script`` is ``golden:BENCHMARK`` (answer the benchmark's golden turns) or a YAML
    script file (see ``voxbench.testing.load_script_file``). ``strict`` (the default) refuses
    what the real service refuses; ``dialect`` picks a provider's variant (``xai`` for
    ``openai-realtime``).
    """
    from voxbench.testing.scripts import Fault, GoldenScript, load_script_file

    spec = FAKE_SERVER_KINDS.get(kind)
    if spec is None:
        raise ConfigError(
            f"unknown fake server kind {kind!r}",
            field="KIND",
            expected=", ".join(sorted(FAKE_SERVER_KINDS)),
        )
    extra: dict[str, Any] = {}
    if not strict:
        if kind not in LENIENT_KINDS:
            raise ConfigError(
                f"the {kind} fake always refuses what the real service refuses",
                field="--lenient",
                expected="one of " + ", ".join(sorted(LENIENT_KINDS)),
            )
        extra["strict"] = False
    if dialect is not None:
        known = DIALECTS.get(kind, ())
        if dialect not in known:
            raise ConfigError(
                f"the {kind} fake has no {dialect!r} dialect",
                field="--dialect",
                expected=", ".join(known) if known else "no --dialect for this kind",
            )
        extra["dialect"] = dialect
    all_faults: list[str | Fault] = list(faults or [])
    if script.startswith("golden:"):
        from voxbench.benchmarks.loader import load_benchmark

        chosen: Any = GoldenScript(load_benchmark(script.removeprefix("golden:")))
    else:
        path = Path(script)
        if not path.is_file():
            raise ConfigError(
                f"no script file {script!r}",
                field="--script",
                expected="golden:BENCHMARK or a YAML file",
            )
        chosen, plan = load_script_file(path)
        all_faults = [*plan.faults, *all_faults]
    module_name, _, class_name = spec.server.partition(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(
        chosen,
        faults=all_faults,
        ttfb_ms=ttfb_ms,
        chunk_ms=chunk_ms,
        api_key=api_key,
        port=port,
        **extra,
    )


def fake_server_command(
    kind: str = typer.Argument(
        ..., help="Which fake: " + ", ".join(sorted(FAKE_SERVER_KINDS)) + "."
    ),
    port: int = typer.Option(0, "--port", "-p", help="Port on 127.0.0.1 (0 picks a free one)."),
    script: str = typer.Option(
        "golden:smoke",
        "--script",
        "-s",
        help="golden:BENCHMARK (answer its golden turns) or a YAML script file.",
    ),
    ttfb_ms: float = typer.Option(
        0.0, "--ttfb-ms", help="Milliseconds before the first content chunk."
    ),
    chunk_ms: float = typer.Option(0.0, "--chunk-ms", help="Milliseconds between content chunks."),
    fault: list[str] = typer.Option(
        None,
        "--fault",
        "-f",
        help="KIND[@N[-M]][:retry_after=S], repeatable; KIND: rate_limit (429), server_error (500), "
        "unauthorized (401), hang, drop, malformed_args, duplicate; N counts requests from 1.",
    ),
    api_key: str = typer.Option(None, "--api-key", help="Require this key (default: accept any)."),
    lenient: bool = typer.Option(
        False,
        "--lenient",
        help="Accept what the real service refuses (realtime fakes and bedrock; for trying out"
        " older clients). Fakes are strict by default.",
    ),
    dialect: str = typer.Option(
        None, "--dialect", help="A provider's variant of the protocol: xai (openai-realtime)."
    ),
) -> None:
    """Run a fake provider server (offline dry runs, adapter development) until Ctrl-C."""
    server = build_fake_server(
        kind,
        script,
        faults=fault,
        ttfb_ms=ttfb_ms,
        chunk_ms=chunk_ms,
        api_key=api_key,
        port=port,
        strict=not lenient,
        dialect=dialect,
    )

    console = make_console()

    async def serve() -> None:
        async with server:
            spec = FAKE_SERVER_KINDS[kind]
            console.print(
                f"fake {kind} server at [b]{server.url}[/b]  (Ctrl-C stops it)", highlight=False
            )
            console.print(
                "try: " + spec.usage.format(url=server.url), highlight=False, soft_wrap=True
            )
            await asyncio.Event().wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        console.print("stopped")
