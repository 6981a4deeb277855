"""The Amazon Nova Sonic adapter: Bedrock's ``InvokeModelWithBidirectionalStream``.

One connection is one HTTP/2 request (``providers.h2_stream``) whose body is a SigV4-signed
AWS event stream (``providers.aws_eventstream``); each Nova Sonic event is the base64
``bytes`` of a ``chunk`` event. After ``sessionStart`` and ``promptStart`` (voice, tools),
the system prompt and then the conversation so far go out as non-interactive text contents
(tool calls in history written as text: the protocol has no way to replay them), then one
interactive audio content is opened for the whole connection and user audio streams into it
at 16 kHz. Turn-taking is the server's: ``end_user_turn`` sends nothing for audio; a typed
turn is an interactive USER text content.

Outputs: FINAL text of the assistant is its transcript (SPECULATIVE text, said before the
audio, is skipped), USER text is what the model heard, ``toolUse`` a call answered by a TOOL
content. A turn completes once a content ended ``END_TURN`` (or ``INTERRUPTED``: a barge-in),
nothing is open and no call waits for its result.

The service ends a connection after 8 minutes. The adapter renews it before then, between
turns, once it is ``renew_after`` seconds old (default 420): it closes the prompt and the
session, and opens a new connection with the conversation as history. A connection that
drops is a fatal ``TargetError``: the runner reconnects with the history.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import os
import time
from typing import Any, Literal
from urllib.parse import quote

from voxbench.core.errors import ErrorCategory, PrerequisiteError, ProtocolError, ProviderError
from voxbench.core.events import (
    AssistantAudio,
    AssistantTextDelta,
    Interrupted,
    SessionEvent,
    TargetError,
    ToolCallRequested,
    TurnComplete,
    Usage,
    UserTranscript,
)
from voxbench.core.secrets import get_secret, redact_text, remember_secret
from voxbench.core.session import (
    HistoryMessage,
    HistoryToolCall,
    Session,
    SessionSetup,
    TargetInfo,
)
from voxbench.providers.aws_eventstream import (
    CONTENT_TYPE,
    AwsCredentials,
    EventSigner,
    FrameDecoder,
    event_frame,
    sign_request,
)
from voxbench.providers.h2_stream import H2Stream, StreamClosed
from voxbench.providers.http import classify_status
from voxbench.targets.realtime.audio import PcmResampler, b64decode, b64encode
from voxbench.targets.realtime.base import (
    describe_history_call,
    parse_tool_arguments,
    tool_result_text,
)
from voxbench.targets.realtime.nova_sonic import events as ev
from voxbench.targets.realtime.wire import ClientModel

log = logging.getLogger(__name__)

KEY_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
SERVICE = "bedrock"
RENEW_AFTER = 420.0
"""Seconds after which a connection is renewed between turns (the service allows 8 min)."""
_EXCEPTIONS = {
    "ValidationException": "bad_request",
    "AccessDeniedException": "authentication",
    "UnrecognizedClientException": "authentication",
    "ThrottlingException": "rate_limit",
    "ServiceQuotaExceededException": "rate_limit",
    "ModelTimeoutException": "timeout",
    "InternalServerException": "server",
    "ModelStreamErrorException": "server",
    "ServiceUnavailableException": "server",
}


class _Connection:
    """One signed bidirectional stream."""

    def __init__(self, stream: H2Stream, signer: EventSigner, number: int) -> None:
        self.stream = stream
        self.signer = signer
        self.prompt = f"prompt-voxbench-{number}"
        self.audio = f"audio-voxbench-{number}"
        self.opened = time.monotonic()
        self.lock = asyncio.Lock()
        self.receiver: asyncio.Task[None] | None = None
        self.retired = False


class NovaSonicSession(Session):
    """A conversation with Amazon Nova Sonic over Bedrock's bidirectional stream."""

    provider = "nova-sonic"

    def __init__(
        self, model: str, *, base_url: str | None = None, options: dict[str, Any] | None = None
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.options = dict(options or {})
        self.region = str(
            self.options.get("region")
            or os.environ.get("AWS_REGION")
            or os.environ.get("AWS_DEFAULT_REGION")
            or "us-east-1"
        )
        self.output_rate = int(self.options.get("output_sample_rate", 24000))
        if self.output_rate not in ev.OUTPUT_RATES:
            raise PrerequisiteError(
                f"{self.provider}: output_sample_rate {self.output_rate} is not one of "
                + ", ".join(map(str, ev.OUTPUT_RATES))
            )
        self.voice = str(self.options.get("voice", "matthew"))
        self.renew_after = float(self.options.get("renew_after", RENEW_AFTER))
        self.connect_timeout = float(self.options.get("connect_timeout", 15.0))
        self.info = TargetInfo(
            name=f"{self.provider}/{model}",
            input_modality="audio",
            output_modality="audio",
            input_sample_rate=ev.INPUT_RATE,
            output_sample_rate=self.output_rate,
        )
        self.connections = 0
        """Connections opened (a renewal adds one)."""
        self._queue: asyncio.Queue[SessionEvent] = asyncio.Queue()
        self._conn: _Connection | None = None
        self._setup: SessionSetup | None = None
        self._history: list[HistoryMessage] = []
        self._resample = PcmResampler(ev.INPUT_RATE)
        self._names = 0
        self._text: list[str] = []
        self._closing = False
        self._reset_turn()

    def _reset_turn(self) -> None:
        self._active = False
        self._end_turn = False
        self._stop_reason: str | None = None
        self._interrupted = False
        self._contents: dict[str, ev.OutputContentStart] = {}
        self._open: set[str] = set()
        self._said: list[str] = []
        self._calls: dict[str, HistoryToolCall] = {}
        self._waiting: set[str] = set()

    # -- connection -----------------------------------------------------------------------

    def url(self) -> str:
        base = (self.base_url or f"https://bedrock-runtime.{self.region}.amazonaws.com").rstrip("/")
        return f"{base}/model/{quote(self.model, safe='')}/invoke-with-bidirectional-stream"

    def credentials(self) -> AwsCredentials:
        """AWS credentials from the environment, else botocore's chain (profiles, roles)."""
        access = get_secret("AWS_ACCESS_KEY_ID", required=False)
        secret = get_secret("AWS_SECRET_ACCESS_KEY", required=False)
        token = get_secret("AWS_SESSION_TOKEN", required=False)
        if access and secret:
            return AwsCredentials(access, secret, token)
        try:
            import botocore.session
        except ImportError:
            raise PrerequisiteError(
                'Amazon Nova Sonic needs botocore: pip install "voxbench[nova-sonic]"'
            ) from None
        found = botocore.session.get_session().get_credentials()
        if found is None:
            raise PrerequisiteError(
                f"no AWS credentials for {self.provider}: set AWS_ACCESS_KEY_ID and "
                "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)"
            )
        frozen = found.get_frozen_credentials()
        for value in (frozen.secret_key, frozen.token):
            if value:
                remember_secret(value)
        return AwsCredentials(frozen.access_key, frozen.secret_key, frozen.token)

    async def start(self, setup: SessionSetup) -> None:
        self._setup = setup
        self._history = list(setup.history)
        await self._connect()

    async def _connect(self) -> None:
        assert self._setup is not None
        creds = self.credentials()
        url = self.url()
        headers, signature = sign_request(
            url,
            {"content-type": CONTENT_TYPE, "accept": CONTENT_TYPE},
            creds,
            region=self.region,
            service=SERVICE,
        )
        stream = H2Stream(url, connect_timeout=self.connect_timeout, provider=self.provider)
        try:
            status, answer = await stream.open(headers)
            if status != 200:
                body = await self._read_body(stream)
                raise classify_status(
                    status, answer, body, provider=self.provider, key_vars=KEY_VARS, url=url
                )
        except BaseException:
            await stream.close()
            raise
        self.connections += 1
        signer = EventSigner(creds.secret_key, self.region, SERVICE, signature)
        conn = _Connection(stream, signer, self.connections)
        self._conn = conn
        conn.receiver = asyncio.create_task(self._receive_loop(conn))
        await self._open_prompt(conn, self._setup, self._history)

    async def _read_body(self, stream: H2Stream) -> bytes:
        body = b""
        with contextlib.suppress(StreamClosed, TimeoutError):
            async with asyncio.timeout(self.connect_timeout):
                while len(body) < 65536:
                    body += await stream.receive()
        return body

    async def _open_prompt(
        self, conn: _Connection, setup: SessionSetup, history: list[HistoryMessage]
    ) -> None:
        inference = ev.InferenceConfiguration(
            maxTokens=int(self.options.get("max_tokens", 1024)),
            topP=float(self.options.get("top_p", 0.9)),
            temperature=float(self.options.get("temperature", 0.7)),
        )
        sensitivity = self.options.get("endpointing_sensitivity")
        await self._send(
            conn,
            "sessionStart",
            ev.SessionStart(
                inferenceConfiguration=inference,
                turnDetectionConfiguration=ev.TurnDetectionConfiguration(
                    endpointingSensitivity=str(sensitivity).upper()  # type: ignore[arg-type]
                )
                if sensitivity
                else None,
            ),
        )
        tools = [
            ev.Tool(
                toolSpec=ev.ToolSpec(
                    name=tool.name,
                    description=tool.description,
                    inputSchema=ev.InputSchema(json_=json.dumps(tool.parameters)),
                )
            )
            for tool in setup.tools
        ]
        await self._send(
            conn,
            "promptStart",
            ev.PromptStart(
                promptName=conn.prompt,
                audioOutputConfiguration=ev.AudioOutputConfiguration(
                    sampleRateHertz=self.output_rate, voiceId=self.voice
                ),
                toolUseOutputConfiguration=ev.MediaType(mediaType="application/json")
                if tools
                else None,
                toolConfiguration=ev.ToolConfiguration(tools=tools) if tools else None,
            ),
        )
        await self._text_content(conn, "SYSTEM", setup.system_prompt, interactive=False)
        for message in history:
            text = message.text
            if message.tool_calls:
                calls = " ".join(describe_history_call(c) for c in message.tool_calls)
                text = f"{calls} {text}".strip()
            if text:
                role = "USER" if message.role == "user" else "ASSISTANT"
                await self._text_content(conn, role, text, interactive=False)
        await self._send(
            conn,
            "contentStart",
            ev.ContentStart(
                promptName=conn.prompt,
                contentName=conn.audio,
                type="AUDIO",
                interactive=True,
                role="USER",
                audioInputConfiguration=ev.AudioInputConfiguration(),
            ),
        )

    async def _text_content(
        self, conn: _Connection, role: str, text: str, *, interactive: bool
    ) -> None:
        self._names += 1
        name = f"text-voxbench-{self._names}"
        await self._send(
            conn,
            "contentStart",
            ev.ContentStart(
                promptName=conn.prompt,
                contentName=name,
                type="TEXT",
                interactive=interactive,
                role=role,  # type: ignore[arg-type]
                textInputConfiguration=ev.MediaType(),
            ),
        )
        await self._send(
            conn,
            "textInput",
            ev.ContentInput(promptName=conn.prompt, contentName=name, content=text),
        )
        await self._send(
            conn, "contentEnd", ev.ContentEnd(promptName=conn.prompt, contentName=name)
        )

    async def _send(self, conn: _Connection, name: str, body: ClientModel) -> bool:
        """Sign and send one event; False (nothing raised) when the connection is gone."""
        wrapped = json.dumps({"bytes": base64.b64encode(ev.client_event(name, body)).decode()})
        async with conn.lock:
            frame = conn.signer.envelope(event_frame("chunk", wrapped.encode()))
            try:
                await conn.stream.send(frame)
            except StreamClosed:
                return False
        return True

    async def _retire(self, conn: _Connection, *, polite: bool) -> None:
        """End ``conn`` on purpose: its end is no drop to report."""
        conn.retired = True
        if polite:
            with contextlib.suppress(Exception):
                await self._send(
                    conn,
                    "contentEnd",
                    ev.ContentEnd(promptName=conn.prompt, contentName=conn.audio),
                )
                await self._send(conn, "promptEnd", ev.PromptEnd(promptName=conn.prompt))
                await self._send(conn, "sessionEnd", ev.SessionEnd())
                async with conn.lock:
                    await conn.stream.send(conn.signer.envelope(b""))
                await conn.stream.end()
        if conn.receiver is not None and not conn.receiver.done():
            conn.receiver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await conn.receiver
        await conn.stream.close()

    async def _renew_if_due(self) -> None:
        """Between turns: replace a connection near the service's 8-minute limit."""
        conn = self._conn
        if conn is None or self._active or self._closing:
            return
        if time.monotonic() - conn.opened < self.renew_after:
            return
        log.info("%s: renewing the connection after %.0f s", self.provider, self.renew_after)
        self._conn = None
        await self._retire(conn, polite=True)
        self._resample = PcmResampler(ev.INPUT_RATE)
        try:
            await self._connect()
        except ProviderError as exc:
            self.emit(
                TargetError(
                    category=exc.category,
                    message=redact_text(f"{self.provider}: renewing the connection failed: {exc}"),
                    retryable=exc.retryable,
                    fatal=True,
                )
            )

    # -- the Session surface --------------------------------------------------------------

    def emit(self, event: SessionEvent) -> None:
        self._queue.put_nowait(event)

    async def events(self) -> Any:
        while True:
            yield await self._queue.get()

    async def send_user_text(self, text: str) -> None:
        if not self._text:
            await self._renew_if_due()  # before the turn: its latency never includes a renewal
        self._text.append(text)

    async def send_user_audio(self, pcm: bytes, sample_rate: int) -> None:
        await self._renew_if_due()
        conn = self._conn
        data = self._resample(pcm, sample_rate)
        if conn is not None and data:
            await self._audio(conn, data)

    async def _audio(self, conn: _Connection, data: bytes) -> None:
        await self._send(
            conn,
            "audioInput",
            ev.ContentInput(
                promptName=conn.prompt, contentName=conn.audio, content=b64encode(data)
            ),
        )

    async def end_user_turn(self) -> None:
        text, self._text = " ".join(self._text), []
        self._active = True
        conn = self._conn
        if conn is None:
            return
        tail = self._resample.flush()
        if tail:
            await self._audio(conn, tail)
        if text:
            self._history.append(HistoryMessage(role="user", text=text))
            await self._text_content(conn, "USER", text, interactive=True)

    async def send_tool_result(self, call_id: str, result: Any) -> None:
        conn = self._conn
        if call_id not in self._waiting or conn is None:
            log.warning(
                "%s: result for unknown or answered call %s ignored", self.provider, call_id
            )
            return
        self._waiting.discard(call_id)
        self._calls[call_id].result = result
        self._names += 1
        name = f"tool-voxbench-{self._names}"
        await self._send(
            conn,
            "contentStart",
            ev.ContentStart(
                promptName=conn.prompt,
                contentName=name,
                type="TOOL",
                interactive=False,
                role="TOOL",
                toolResultInputConfiguration=ev.ToolResultInputConfiguration(toolUseId=call_id),
            ),
        )
        await self._send(
            conn,
            "toolResult",
            ev.ContentInput(
                promptName=conn.prompt, contentName=name, content=tool_result_text(result)
            ),
        )
        await self._send(
            conn, "contentEnd", ev.ContentEnd(promptName=conn.prompt, contentName=name)
        )
        self._maybe_complete()

    async def close(self) -> None:
        self._closing = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await self._retire(conn, polite=not conn.retired)

    # -- outputs --------------------------------------------------------------------------

    async def _receive_loop(self, conn: _Connection) -> None:
        decoder = FrameDecoder()
        reason = "the stream ended"
        try:
            while True:
                data = await conn.stream.receive()
                for headers, payload in decoder.feed(data):
                    if not self._on_frame(headers, payload):
                        reason = "the service sent an exception"
                        await conn.stream.close()
                        return
        except StreamClosed as exc:
            reason = exc.reason
        except ProtocolError as exc:
            reason = str(exc)
        if not conn.retired and not self._closing:
            conn.retired = True
            self.emit(
                TargetError(
                    category=ErrorCategory.CONNECTIVITY,
                    message=redact_text(
                        f"{self.provider}: the stream closed unexpectedly ({reason})"
                    ),
                    retryable=True,
                    fatal=True,
                )
            )

    def _on_frame(self, headers: dict[str, Any], payload: bytes) -> bool:
        """Handle one frame; False after an exception (the service ends the stream)."""
        kind = headers.get(":message-type")
        if kind in ("exception", "error"):
            name = str(headers.get(":exception-type") or headers.get(":error-code") or "error")
            try:
                detail = str(json.loads(payload).get("message", ""))
            except (ValueError, AttributeError):
                detail = payload.decode("utf-8", "replace")[:300]
            category = _EXCEPTIONS.get(name, "server")
            self.emit(
                TargetError(
                    category=category,  # type: ignore[arg-type]
                    message=redact_text(f"{self.provider}: {name}: {detail}"),
                    retryable=category not in ("authentication", "bad_request"),
                    fatal=True,
                )
            )
            return False
        if kind != "event" or headers.get(":event-type") != "chunk":
            log.info("%s: ignoring frame %s/%s", self.provider, kind, headers.get(":event-type"))
            return True
        try:
            wrapped = json.loads(payload)
            raw = b64decode(str(wrapped["bytes"]), "chunk bytes")
        except (ValueError, KeyError, TypeError) as exc:
            raise ProtocolError(f"{self.provider}: chunk without base64 bytes: {exc}") from exc
        name, event = ev.parse_server_event(raw)
        if event is None:
            log.info("%s: ignoring output event %r", self.provider, name)
        else:
            self._on_event(event)
        return True

    def _on_event(self, event: Any) -> None:
        if isinstance(event, ev.OutputContentStart):
            self._contents[event.contentId] = event
            if event.role != "USER":
                self._open.add(event.contentId)
        elif isinstance(event, ev.TextOutput):
            self._on_text(event)
        elif isinstance(event, ev.AudioOutput):
            pcm = b64decode(event.content, "audioOutput")
            if pcm:
                self.emit(
                    AssistantAudio(pcm=pcm[: len(pcm) // 2 * 2], sample_rate=self.output_rate)
                )
        elif isinstance(event, ev.ToolUse):
            self._on_tool_use(event)
        elif isinstance(event, ev.OutputContentEnd):
            self._open.discard(event.contentId)
            start = self._contents.get(event.contentId)
            role = start.role if start is not None else event.role
            if event.stopReason == "INTERRUPTED" and not self._interrupted:
                self._interrupted = True
                self.emit(Interrupted())
            if event.stopReason in ("END_TURN", "INTERRUPTED") and role != "USER":
                self._end_turn = True
                self._stop_reason = event.stopReason
            self._maybe_complete()
        elif isinstance(event, ev.UsageEvent):
            delta = event.details.get("delta", {}) if isinstance(event.details, dict) else {}
            given, made = delta.get("input", {}) or {}, delta.get("output", {}) or {}
            self.emit(
                Usage(
                    input_tokens=int(given.get("speechTokens", 0))
                    + int(given.get("textTokens", 0)),
                    output_tokens=int(made.get("speechTokens", 0)) + int(made.get("textTokens", 0)),
                    audio_input_tokens=int(given.get("speechTokens", 0)),
                    audio_output_tokens=int(made.get("speechTokens", 0)),
                )
            )

    def _on_text(self, event: ev.TextOutput) -> None:
        start = self._contents.get(event.contentId)
        if "".join(event.content.split()) == '{"interrupted":true}':
            if not self._interrupted:
                self._interrupted = True
                self.emit(Interrupted())
            return
        if event.role == "USER" or (start is not None and start.role == "USER"):
            last = self._history[-1] if self._history else None
            typed = last is not None and last.role == "user" and last.text == event.content
            if event.content and not typed:  # a typed turn may come back as USER text
                self._history.append(HistoryMessage(role="user", text=event.content))
                self.emit(UserTranscript(text=event.content))
            return
        if start is not None and start.stage == "SPECULATIVE":
            return
        if event.content:
            piece = (" " if self._said else "") + event.content
            self._said.append(event.content)
            self._active = True
            self.emit(AssistantTextDelta(text=piece))

    def _on_tool_use(self, event: ev.ToolUse) -> None:
        self._active = True
        if event.toolUseId in self._calls:
            return  # a repeated toolUse
        arguments, error = parse_tool_arguments(event.content)
        self._calls[event.toolUseId] = HistoryToolCall(
            call_id=event.toolUseId, name=event.toolName, arguments=arguments
        )
        self._waiting.add(event.toolUseId)
        self.emit(
            ToolCallRequested(
                call_id=event.toolUseId,
                name=event.toolName,
                arguments=arguments,
                raw_arguments=str(event.content) if error else None,
                parse_error=error,
            )
        )

    def _maybe_complete(self) -> None:
        if not self._end_turn or self._open or self._waiting:
            return
        said = " ".join(self._said)
        if said or self._calls:
            self._history.append(
                HistoryMessage(role="assistant", text=said, tool_calls=list(self._calls.values()))
            )
        status: Literal["cancelled", "completed"] = (
            "cancelled" if self._interrupted else "completed"
        )
        stop = self._stop_reason
        self._reset_turn()
        self.emit(TurnComplete(status=status, stop_reason=stop))
