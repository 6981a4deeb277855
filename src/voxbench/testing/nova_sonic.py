"""A fake Amazon Nova Sonic: Bedrock's bidirectional stream over cleartext HTTP/2 (h2c).

``POST /model/<id>/invoke-with-bidirectional-stream`` must carry a SigV4 ``Authorization``
(``.../bedrock/aws4_request``), ``x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-EVENTS``
and the event-stream content type; a wrong access key id (when ``api_key`` is set) is a 403
``UnrecognizedClientException``. The request body is decoded with botocore's own parser:
every frame must be a signed envelope (``:date``, ``:chunk-signature``; with
``secret_key`` set the chained signatures are verified) around a ``chunk`` event whose
``bytes`` are one Nova Sonic input event, parsed with the adapter's strict models. What the
service refuses per its docs is refused with a ``ValidationException`` frame that ends the
stream: events before ``sessionStart``, a second ``sessionStart``, content outside an open
prompt or content, history after the audio content opened, a tool result for no pending
``toolUse``.

The model answers typed USER contents at their end and spoken ones when the energy VAD
hears speech stop (server-side turn-taking), with a USER transcript first. Each answer is a
SPECULATIVE text content, an AUDIO content, a FINAL text content and one TOOL content per
call; the last content ends ``END_TURN`` unless calls wait for results. Speech during an
answer interrupts it (``{ "interrupted" : true }`` and ``INTERRUPTED``). Faults, by
response number: ``server_error`` / ``rate_limit`` / ``unauthorized`` send an
``InternalServerException`` / ``ThrottlingException`` / ``AccessDeniedException`` frame and
end the stream, ``drop`` cuts the connection after the first output, ``hang`` never answers,
``malformed_args`` cuts tool arguments short, ``duplicate`` repeats ``toolUse`` events.
A stream older than ``session_limit_s`` (the service's 8 minutes) is ended with a
``ValidationException``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import json
import re
import time
from collections.abc import Sequence
from typing import Any

import h2.config
import h2.connection
import h2.events
from botocore.eventstream import EventStreamBuffer

from voxbench.core.errors import ProtocolError
from voxbench.targets.realtime.nova_sonic import events as ev
from voxbench.targets.realtime.nova_sonic.events import (
    STREAMING_PAYLOAD,
    EventSigner,
    encode_message,
    event_frame,
)
from voxbench.testing.http_server import ListeningServer
from voxbench.testing.realtime_common import (
    Conversation,
    EnergyVad,
    SpeechFake,
    Voice,
    fault_kinds,
    wait_until,
)
from voxbench.testing.scripts import Fault, Script, ScriptCall

_PATH = re.compile(r"^/model/(?P<model>[^/]+)/invoke-with-bidirectional-stream$")
_AUTH = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<day>\d{8})/(?P<region>[^/]+)/bedrock/"
    r"aws4_request, SignedHeaders=(?P<signed>[^,]+), Signature=(?P<sig>[0-9a-f]{64})$"
)
ENDPOINTING_SILENCE_MS = {"HIGH": 600, "MEDIUM": 1000, "LOW": 1500}
"""The fake's end-of-turn silence per ``endpointingSensitivity`` (its own choice: the docs
give no durations); MEDIUM when the session does not say. Shorter, a sentence pause of the
user's synthetic voice would end the turn mid-utterance."""
_FAULT_EXCEPTIONS = {
    "server_error": "InternalServerException",
    "rate_limit": "ThrottlingException",
    "unauthorized": "AccessDeniedException",
}


class Refused(Exception):
    """What the service answers with an exception frame (then the stream ends)."""

    def __init__(self, message: str, kind: str = "ValidationException") -> None:
        super().__init__(message)
        self.kind = kind


class FakeNovaSonicServer(SpeechFake, ListeningServer):
    """Bedrock runtime's ``InvokeModelWithBidirectionalStream`` for Nova Sonic models."""

    provider = "nova-sonic"

    def __init__(
        self,
        script: Script,
        *,
        faults: Sequence[str | Fault] = (),
        ttfb_ms: float = 0.0,
        chunk_ms: float = 0.0,
        audio_chunk_ms: int = 100,
        out_of_order: bool = False,
        api_key: str | None = None,
        secret_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        voice: Voice | None = None,
        strict: bool = True,
        session_limit_s: float = 480.0,
    ) -> None:
        self.setup_speech(
            script, faults, ttfb_ms, chunk_ms, audio_chunk_ms, out_of_order, api_key, voice
        )
        self.secret_key = secret_key
        """With it, every event signature is verified (``api_key`` is the access key id)."""
        self.strict = strict
        self.session_limit = session_limit_s
        ListeningServer.__init__(self, host, port)
        self.requests: list[dict[str, Any]] = []
        """Each stream opened: path, model, region and the signed header names."""
        self.refusals: list[str] = []
        """Every exception frame sent, as ``Kind: message``."""
        self.audio_bytes = 0

    @property
    def url(self) -> str:
        """The adapter's ``base_url`` (an ``http`` URL: cleartext HTTP/2)."""
        return f"http://{self.host}:{self.port}"

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        link = _Link(self, reader, writer)
        try:
            await link.run()
        except (asyncio.CancelledError, ConnectionError):
            pass
        finally:
            self._connections.discard(task)
            await link.close()


class _Link:
    """One HTTP/2 connection (the adapter opens one stream on each)."""

    def __init__(
        self,
        server: FakeNovaSonicServer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.h2 = h2.connection.H2Connection(
            config=h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
        )
        self.streams: dict[int, _Stream] = {}
        self.window = asyncio.Event()
        self.lock = asyncio.Lock()

    async def run(self) -> None:
        self.h2.initiate_connection()
        await self.flush()
        while True:
            data = await self.reader.read(65536)
            if not data:
                return
            for event in self.h2.receive_data(data):
                await self.on_event(event)
            await self.flush()

    async def on_event(self, event: Any) -> None:
        if isinstance(event, h2.events.RequestReceived):
            await self.on_request(event.stream_id, {str(k): str(v) for k, v in event.headers})
        elif isinstance(event, h2.events.DataReceived):
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            stream = self.streams.get(event.stream_id)
            if stream is not None and event.data:
                await stream.feed(bytes(event.data))
        elif isinstance(event, h2.events.StreamEnded):
            stream = self.streams.get(event.stream_id)
            if stream is not None:
                await stream.input_ended()
        elif isinstance(event, h2.events.WindowUpdated):
            self.window.set()
        elif isinstance(event, h2.events.StreamReset):
            stream = self.streams.pop(event.stream_id, None)
            if stream is not None:
                await stream.stop()

    async def on_request(self, stream_id: int, headers: dict[str, str]) -> None:
        path = headers.get(":path", "")
        match = _PATH.match(path)
        auth = _AUTH.match(headers.get("authorization", ""))
        if headers.get(":method") != "POST" or match is None:
            await self.refuse(stream_id, 404, "UnknownOperationException", f"no route {path}")
            return
        if auth is None or headers.get("x-amz-content-sha256") != STREAMING_PAYLOAD:
            await self.refuse(
                stream_id,
                403,
                "InvalidSignatureException",
                "a SigV4 signature over STREAMING-AWS4-HMAC-SHA256-EVENTS is required",
            )
            return
        if self.server.api_key is not None and auth["key"] != self.server.api_key:
            await self.refuse(
                stream_id,
                403,
                "UnrecognizedClientException",
                "The security token included in the request is invalid.",
            )
            return
        if headers.get("content-type") != "application/vnd.amazon.eventstream":
            await self.refuse(stream_id, 400, "ValidationException", "wrong content-type")
            return
        model = match["model"].replace("%3A", ":").replace("%3a", ":")
        self.server.requests.append(
            {
                "path": path,
                "model": model,
                "region": auth["region"],
                "signed_headers": auth["signed"].split(";"),
            }
        )
        self.h2.send_headers(
            stream_id,
            [
                (":status", "200"),
                ("content-type", "application/vnd.amazon.eventstream"),
                ("x-amzn-requestid", self.server.new_id("req")),
            ],
        )
        await self.flush()
        self.streams[stream_id] = _Stream(self, stream_id, auth["region"], auth["sig"])

    async def refuse(self, stream_id: int, status: int, kind: str, message: str) -> None:
        self.server.refusals.append(f"{kind}: {message}")
        body = json.dumps({"message": message}).encode()
        self.h2.send_headers(
            stream_id,
            [
                (":status", str(status)),
                ("content-type", "application/json"),
                ("x-amzn-errortype", kind),
            ],
        )
        self.h2.send_data(stream_id, body, end_stream=True)
        await self.flush()

    async def send(self, stream_id: int, data: bytes, *, end: bool = False) -> None:
        """Body bytes under flow control."""
        async with self.lock:
            view = memoryview(data)
            while view:
                window = min(
                    self.h2.local_flow_control_window(stream_id), self.h2.max_outbound_frame_size
                )
                if window <= 0:
                    self.window.clear()
                    await self.window.wait()
                    continue
                self.h2.send_data(stream_id, bytes(view[:window]))
                view = view[window:]
                await self.flush()
            if end:
                self.h2.end_stream(stream_id)
                await self.flush()

    async def flush(self) -> None:
        out = self.h2.data_to_send()
        if out:
            self.writer.write(out)
            await self.writer.drain()

    def abort(self) -> None:
        """Cut the connection without a word (the ``drop`` fault)."""
        self.writer.transport.abort()

    async def close(self) -> None:
        for stream in list(self.streams.values()):
            await stream.stop()
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 2.0)


class _Stream:
    """One Nova Sonic session: the input events in, the model's answers out."""

    def __init__(self, link: _Link, stream_id: int, region: str, signature: str) -> None:
        self.link = link
        self.server = link.server
        self.stream_id = stream_id
        self.outer = EventStreamBuffer()
        self.signer = (
            EventSigner(self.server.secret_key, region, "bedrock", signature)
            if self.server.secret_key
            else None
        )
        self.opened = time.monotonic()
        self.session_id = self.server.new_id("session")
        self.started = False
        self.prompt: ev.PromptStart | None = None
        self.contents: dict[str, ev.ContentStart] = {}
        self.texts: dict[str, list[str]] = {}
        self.audio_opened = False
        self.conversation = Conversation(self.server.script)
        self.vad = EnergyVad(ev.INPUT_RATE)
        self.pending: dict[str, ScriptCall] = {}
        self.results: dict[str, str] = {}
        self.task: asyncio.Task[None] | None = None
        self.completion = self.server.new_id("completion")
        self.completion_sent = False
        self.ended = False
        self.speaking: str | None = None

    # -- input ----------------------------------------------------------------------------

    async def feed(self, data: bytes) -> None:
        if self.ended:
            return
        try:
            self.outer.add_data(data)
            for envelope in self.outer:
                await self.on_envelope(dict(envelope.headers), bytes(envelope.payload))
                if self.ended:
                    return
        except Refused as exc:
            await self.refuse(str(exc), exc.kind)
        except Exception as exc:  # botocore's parser errors, bad JSON, bad models
            await self.refuse(f"{type(exc).__name__}: {exc}")

    async def on_envelope(self, headers: dict[str, Any], payload: bytes) -> None:
        date, signature = headers.get(":date"), headers.get(":chunk-signature")
        if not isinstance(date, int) or not isinstance(signature, bytes) or len(signature) != 32:
            raise Refused("each event must be signed (:date and :chunk-signature headers)")
        if self.signer is not None:
            moment = dt.datetime.fromtimestamp(date / 1000, dt.UTC)
            expected = self.signer.signature(payload, moment)
            if expected != signature.hex():
                raise Refused(
                    "The request signature we calculated does not match the signature you "
                    "provided.",
                    "InvalidSignatureException",
                )
            self.signer.prior_signature = expected
        if not payload:
            return  # the signed end of the input
        inner = EventStreamBuffer()
        inner.add_data(payload)
        for message in inner:
            head = dict(message.headers)
            if (head.get(":message-type"), head.get(":event-type")) != ("event", "chunk"):
                raise Refused(f"unexpected input frame {head}")
            if head.get(":content-type") != "application/json":
                raise Refused("chunk events are application/json")
            raw = base64.b64decode(json.loads(message.payload)["bytes"], validate=True)
            try:
                name, body = ev.parse_client_event(raw)
            except ProtocolError as exc:
                raise Refused(str(exc)) from exc
            self.server.received.append({"event": {name: body.dump()}})
            await self.on_input(name, body)
        if time.monotonic() - self.opened > self.server.session_limit:
            raise Refused("the session exceeded its maximum duration")

    async def on_input(self, name: str, body: Any) -> None:
        if name == "sessionStart":
            if self.started:
                raise Refused("sessionStart was already sent")
            self.started = True
            sensitivity = body.turnDetectionConfiguration
            level = sensitivity.endpointingSensitivity if sensitivity else "MEDIUM"
            self.vad = EnergyVad(ev.INPUT_RATE, silence_ms=ENDPOINTING_SILENCE_MS[level])
            return
        if not self.started:
            raise Refused(f"{name} before sessionStart")
        if name == "sessionEnd":
            await self.end()
            return
        if name == "promptStart":
            if self.prompt is not None:
                raise Refused("a prompt is already open")
            self.prompt = body
            return
        if self.prompt is None or getattr(body, "promptName", None) != self.prompt.promptName:
            raise Refused(f"{name} for a prompt that is not open")
        if name == "promptEnd":
            self.prompt = None
            return
        if name == "contentStart":
            await self.on_content_start(body)
            return
        start = self.contents.get(body.contentName)
        if start is None:
            raise Refused(f"{name} for content {body.contentName!r} that is not open")
        if name == "contentEnd":
            await self.on_content_end(self.contents.pop(body.contentName), body.contentName)
        elif name == "audioInput":
            if start.type != "AUDIO":
                raise Refused("audioInput into a content that is not AUDIO")
            await self.on_audio(base64.b64decode(body.content, validate=True))
        elif name in ("textInput", "toolResult"):
            wanted = "TOOL" if name == "toolResult" else "TEXT"
            if start.type != wanted:
                raise Refused(f"{name} into a {start.type} content")
            self.texts.setdefault(body.contentName, []).append(body.content)

    async def on_content_start(self, start: ev.ContentStart) -> None:
        if start.contentName in self.contents:
            raise Refused(f"content {start.contentName!r} is already open")
        config = {
            "TEXT": start.textInputConfiguration,
            "AUDIO": start.audioInputConfiguration,
            "TOOL": start.toolResultInputConfiguration,
        }[start.type]
        if config is None:
            raise Refused(f"a {start.type} contentStart needs its input configuration")
        if start.type == "AUDIO":
            if start.role != "USER" or not start.interactive:
                raise Refused("audio input is an interactive USER content")
            self.audio_opened = True
        elif start.type == "TEXT" and not start.interactive:
            if self.audio_opened and self.server.strict:
                raise Refused("conversation history must come before audio input")
        elif start.type == "TOOL":
            assert start.toolResultInputConfiguration is not None
            if start.toolResultInputConfiguration.toolUseId not in self.pending:
                raise Refused("toolResult for no pending toolUse")
        self.contents[start.contentName] = start

    async def on_content_end(self, start: ev.ContentStart, name: str) -> None:
        text = "".join(self.texts.pop(name, []))
        if start.type == "TEXT" and not start.interactive:
            if start.role == "USER":
                self.conversation.user_text(text)
            elif start.role == "ASSISTANT":
                self.conversation.assistant(text)
        elif start.type == "TEXT":
            self.conversation.user_text(text)
            self.respond_later()
        elif start.type == "TOOL":
            assert start.toolResultInputConfiguration is not None
            call_id = start.toolResultInputConfiguration.toolUseId
            self.pending.pop(call_id)
            self.conversation.result(call_id, text)
            if not self.pending:
                self.respond_later()

    async def on_audio(self, pcm: bytes) -> None:
        self.server.audio_bytes += len(pcm)
        for kind, _ in self.vad.feed(pcm):
            if kind == "started" and self.task is not None and not self.task.done():
                await self.barge_in()
            elif kind == "stopped":
                heard = self.conversation.user_audio()
                await self.user_transcript(heard)
                self.respond_later()

    async def input_ended(self) -> None:
        if not self.ended:
            await self.end()

    # -- output ---------------------------------------------------------------------------

    async def emit(self, name: str, body: dict[str, Any]) -> None:
        body = {"sessionId": self.session_id} | body
        if self.prompt is not None:
            body.setdefault("promptName", self.prompt.promptName)
        data = json.dumps({"event": {name: body}}).encode()
        wrapped = json.dumps({"bytes": base64.b64encode(data).decode()}).encode()
        await self.link.send(self.stream_id, event_frame("chunk", wrapped))

    async def refuse(self, message: str, kind: str = "ValidationException") -> None:
        self.server.refusals.append(f"{kind}: {message}")
        frame = encode_message(
            {
                ":exception-type": kind,
                ":content-type": "application/json",
                ":message-type": "exception",
            },
            json.dumps({"message": message}).encode(),
        )
        self.ended = True
        with contextlib.suppress(Exception):
            await self.link.send(self.stream_id, frame, end=True)
        await self.stop()

    async def end(self) -> None:
        self.ended = True
        await self.stop()
        with contextlib.suppress(Exception):
            await self.link.send(self.stream_id, b"", end=True)

    async def stop(self) -> None:
        task, self.task = self.task, None
        if task is not None and not task.done() and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def respond_later(self) -> None:
        self.server.responses += 1
        number, t0 = self.server.responses, time.perf_counter()
        self.task = asyncio.create_task(self.respond(number, t0))

    async def content(
        self, kind: str, role: str, *, stage: str | None = None, **config: Any
    ) -> str:
        content_id = self.server.new_id("content")
        body: dict[str, Any] = {
            "completionId": self.completion,
            "contentId": content_id,
            "type": kind,
            "role": role,
        }
        if stage is not None:
            body["additionalModelFields"] = json.dumps({"generationStage": stage})
        await self.emit("contentStart", body | config)
        return content_id

    async def content_end(self, content_id: str, kind: str, stop: str) -> None:
        await self.emit(
            "contentEnd",
            {"completionId": self.completion, "contentId": content_id, "type": kind}
            | {"stopReason": stop},
        )

    async def text(self, role: str, text: str, stage: str | None, stop: str) -> None:
        content_id = await self.content(
            "TEXT", role, stage=stage, textOutputConfiguration={"mediaType": "text/plain"}
        )
        await self.emit(
            "textOutput",
            {"completionId": self.completion, "contentId": content_id, "role": role}
            | {"content": text},
        )
        await self.content_end(content_id, "TEXT", stop)

    async def user_transcript(self, text: str) -> None:
        await self.text("USER", text, "FINAL", "END_TURN")

    async def barge_in(self) -> None:
        await self.stop()
        if self.speaking is not None:
            content_id, self.speaking = self.speaking, None
            await self.emit(
                "textOutput",
                {"completionId": self.completion, "contentId": content_id, "role": "ASSISTANT"}
                | {"content": '{ "interrupted" : true }'},
            )
            await self.content_end(content_id, "AUDIO", "INTERRUPTED")

    async def respond(self, number: int, t0: float) -> None:
        faults = fault_kinds(self.server.faults, number)
        refused = next((_FAULT_EXCEPTIONS[k] for k in faults if k in _FAULT_EXCEPTIONS), None)
        if refused is not None:
            self.task = None
            await self.refuse(f"injected fault on response {number}", refused)
            return
        if not self.completion_sent:
            self.completion_sent = True
            await self.emit("completionStart", {"completionId": self.completion})
        reply = self.conversation.reply(list(faults.values()))
        if "hang" in faults:
            await asyncio.sleep(3600)
        assert self.prompt is not None
        out = self.prompt.audioOutputConfiguration
        rate = out.sampleRateHertz if out is not None else 24000
        if reply.text:
            await self.server.prepare_speech(reply.text, rate)
        await wait_until(t0 + self.server.ttfb)
        final = "END_TURN" if not reply.calls else "PARTIAL_TURN"
        if reply.text:
            await self.text("ASSISTANT", reply.text, "SPECULATIVE", "PARTIAL_TURN")
            await self.speak(reply.text, rate, t0, drop="drop" in faults)
            await self.text("ASSISTANT", reply.text, "FINAL", final)
        elif not reply.calls:
            await self.text("ASSISTANT", "", "FINAL", "END_TURN")
        made: dict[str, ScriptCall] = {}
        for call in reply.calls:
            call_id = self.server.new_id("tooluse")
            made[call_id] = call
            content_id = await self.content(
                "TOOL", "TOOL", toolUseOutputConfiguration={"mediaType": "application/json"}
            )
            use = {"completionId": self.completion, "contentId": content_id}
            use |= {"toolName": call.name, "toolUseId": call_id, "content": call.arguments_json()}
            for _ in range(2 if "duplicate" in faults else 1):
                await self.emit("toolUse", use)
            await self.content_end(content_id, "TOOL", "TOOL_USE")
            if "drop" in faults and not reply.text:
                self.link.abort()
                return
        self.conversation.assistant(reply.text, made)
        self.pending.update(made)
        words = len(reply.text.split())
        await self.emit(
            "usageEvent",
            {"completionId": self.completion, "totalInputTokens": 0, "totalOutputTokens": words}
            | {"details": {"delta": {"input": {}, "output": {"textTokens": words}}}},
        )

    async def speak(self, text: str, rate: int, t0: float, *, drop: bool) -> None:
        """Say ``text`` as one AUDIO content; ``t0`` is the response's trigger time."""
        content_id = await self.content(
            "AUDIO",
            "ASSISTANT",
            audioOutputConfiguration={"mediaType": "audio/lpcm", "sampleRateHertz": rate},
        )
        self.speaking = content_id
        for i, chunk in enumerate(self.server.speech(text, rate)):
            if i:
                await asyncio.sleep(self.server.chunk)
            else:
                self.server.first_audio_delays.append(time.perf_counter() - t0)
            await self.emit(
                "audioOutput",
                {"completionId": self.completion, "contentId": content_id}
                | {"content": base64.b64encode(chunk).decode()},
            )
            if drop:
                self.link.abort()
                await asyncio.sleep(3600)
        self.speaking = None
        await self.content_end(content_id, "AUDIO", "PARTIAL_TURN")
