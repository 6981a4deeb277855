"""A fake OpenAI Realtime server (GA protocol) on 127.0.0.1, driven by a script.

It parses and answers with the wire models of ``voxbench.targets.realtime.openai.events``
(the adapter's own, so the two cannot drift): ``session.created`` on connect,
``session.updated`` echoing the effective config, manual commits or simulated server VAD
(``EnergyVad``), user items and asynchronous input transcripts, scripted function calls, and
answers streamed as ``response.output_audio.delta`` (synthetic PCM16 at 24 kHz) interleaved
with ``response.output_audio_transcript.delta``. Accepts ``Authorization: Bearer <key>`` or
Azure's ``api-key`` header.

Faults (``voxbench.testing.scripts.Fault``) are keyed by response number, counted per
server: ``server_error`` / ``rate_limit`` / ``unauthorized`` refuse the response with an
``error`` event, ``hang`` never answers, ``drop`` cuts the socket after the first chunk,
``malformed_args`` cuts the call JSON short, ``duplicate`` sends every output event twice
(same ``event_id``). ``out_of_order=True`` delivers the last transcript delta after the
transcript's ``.done`` and user transcripts after ``response.done``.

    async with FakeOpenAIRealtimeServer(GoldenScript(benchmark)) as server:
        ...  # the adapter's base_url is server.url

``dialect="xai"`` speaks xAI's variant: it greets with ``conversation.created``, takes
``voice`` and ``turn_detection`` as top-level session fields (``{"type": null}``: manual
turns), transcribes committed user audio unasked and streams each user transcript as
partials (``...input_audio_transcription.completed`` with ``status: "in_progress"``)
before the final one (``status: "completed"``), and answers in text when
``response.create`` asks for ``response.modalities: ["text"]``. ``strict`` (the default)
refuses, with an ``error`` event as the service does, what the service refuses: in
OpenAI's dialect xAI's top-level fields (``unknown_parameter``), a session without
``type`` (``missing_required_parameter``) and an ``audio/pcm`` rate other than 24000
(``invalid_value``); in xAI's, any session field its voice agent guide does not document
(``XAI_SESSION_PARAMETERS``: ``type``, ``output_modalities``, ``tool_choice``,
``audio.input.transcription``, ... are ``unknown_parameter``). A ``response.create`` while a
response is active is refused in every mode (the API's documented behaviour).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

import numpy as np
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from voxbench.core.errors import ProtocolError
from voxbench.targets.realtime.audio import b64decode, b64encode
from voxbench.targets.realtime.openai import events as ev
from voxbench.targets.realtime.openai.variants import xai_undocumented
from voxbench.targets.realtime.wire import decode_json_object
from voxbench.testing.audio_judge import AudioJudgeScript
from voxbench.testing.realtime_common import (
    Conversation,
    EnergyVad,
    WebsocketFake,
    fault_kinds,
    wait_until,
)
from voxbench.testing.scripts import Fault, Reply, ScriptCall, ScriptExhausted

RATE = ev.OUTPUT_SAMPLE_RATE
_OUTPUT_EVENTS = ("response.", "conversation.item.input_audio_transcription")
_REFUSALS = {
    "server_error": ("server_error", "server_error", "The server had an error."),
    "rate_limit": ("rate_limit_exceeded", "rate_limit_exceeded", "Rate limit reached."),
    "unauthorized": ("invalid_request_error", "invalid_api_key", "Incorrect API key."),
}


class FakeOpenAIRealtimeServer(WebsocketFake):
    """An OpenAI-Realtime-compatible websocket server for tests and dry runs."""

    provider = "openai-realtime"
    id_separator = "_"

    def __init__(self, *args: Any, dialect: Literal["openai", "xai"] = "openai", **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.dialect = dialect

    @property
    def url(self) -> str:
        """The adapter's ``base_url``."""
        return f"ws://{self.host}:{self.port}/v1"

    @property
    def origin(self) -> str:
        """The server root over http (what an Azure endpoint looks like)."""
        return f"http://{self.host}:{self.port}"

    def check(self, connection: ServerConnection, request: Request) -> Response | None:
        url = urlsplit(request.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        bearer = request.headers.get("Authorization", "").removeprefix("Bearer").strip()
        key = request.headers.get("api-key") or bearer
        auth = "api-key" if request.headers.get("api-key") else "bearer" if bearer else None
        self.handshakes.append({"path": url.path, "query": query, "auth": auth})
        if not key or (self.api_key is not None and key != self.api_key):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid or missing API key\n")
        if not url.path.endswith("/realtime") or not (
            query.get("model") or query.get("deployment")
        ):
            return connection.respond(HTTPStatus.NOT_FOUND, "expected /v1/realtime?model=...\n")
        return None

    def new_session(self, ws: ServerConnection) -> _Session:
        return _Session(self, ws)


class _Session:
    """One connection: its session config, conversation and response in progress."""

    def __init__(self, server: FakeOpenAIRealtimeServer, ws: ServerConnection) -> None:
        self.server = server
        self.ws = ws
        self.conversation = Conversation(server.script)
        self.config: dict[str, Any] = {
            "type": "realtime",
            "object": "realtime.session",
            "id": server.new_id("sess"),
            "output_modalities": ["audio"],
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": RATE},
                    "turn_detection": {"type": "server_vad", "silence_duration_ms": 500},
                    "transcription": None,
                },
                "output": {"format": {"type": "audio/pcm", "rate": RATE}, "voice": "alloy"},
            },
            "tools": [],
        }
        self.vad: EnergyVad | None = None
        self.speech_item = ""
        """The item id server VAD announced with ``speech_started`` (committed at its stop)."""
        self.buffer = bytearray()
        self.committed: list[str] = []
        """User audio items committed since the last response (their transcripts are due)."""
        self.task: asyncio.Task[None] | None = None
        self.duplicate = False
        self.modalities: list[str] | None = None
        """The output modalities the last ``response.create`` asked for (None: the session's)."""
        self._configure_vad()

    async def run(self) -> None:
        if self.server.dialect == "xai":
            conversation = {"id": self.server.new_id("conv"), "object": "realtime.conversation"}
            await self.send({"type": "conversation.created", "conversation": conversation})
        else:
            await self.send({"type": "session.created", "session": self.config})
        async for raw in self.ws:
            try:
                event = ev.parse_client_event(raw)
            except ProtocolError as exc:
                await self.error("invalid_request_error", "invalid_event", str(exc), None)
                continue
            self.server.received.append(decode_json_object(raw, "client event"))  # as sent
            await self.handle(event)

    async def stop(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def send(self, payload: dict[str, Any]) -> None:
        text = json.dumps({"event_id": self.server.new_id("event"), **payload})
        await self.ws.send(text)
        if self.duplicate and payload["type"].startswith(_OUTPUT_EVENTS):
            await self.ws.send(text)  # a redelivery: same event id

    async def error(
        self, type_: str, code: str, message: str, event_id: str | None, param: str | None = None
    ) -> None:
        detail = {"type": type_, "code": code, "message": message, "param": param}
        await self.send({"type": "error", "error": detail | {"event_id": event_id}})

    # -- client events --------------------------------------------------------------------

    async def handle(self, event: ev.ClientEvent) -> None:
        if isinstance(event, ev.SessionUpdate):
            sent = event.session.model_dump(mode="json", exclude_unset=True, by_alias=True)
            refusal = _refuse_session(sent, self.server.dialect) if self.server.strict else None
            if refusal is not None:
                code, message, param = refusal
                await self.error("invalid_request_error", code, message, event.event_id, param)
                return
            _merge(self.config, _nest_xai_fields(event.session.dump()))
            self._configure_vad()
            await self.send({"type": "session.updated", "session": self.config})
        elif isinstance(event, ev.InputAudioBufferAppend):
            await self.append(b64decode(event.audio))
        elif isinstance(event, ev.InputAudioBufferCommit):
            if not self.buffer:
                await self.error(
                    "invalid_request_error",
                    "input_audio_buffer_commit_empty",
                    "the input audio buffer is empty",
                    event.event_id,
                )
                return
            await self.commit()
        elif isinstance(event, ev.InputAudioBufferClear):
            self.buffer.clear()
            await self.send({"type": "input_audio_buffer.cleared"})
        elif isinstance(event, ev.ConversationItemCreate):
            await self.add_item(event.item)
        elif isinstance(event, ev.ConversationItemTruncate):
            await self.send({**event.dump(), "type": "conversation.item.truncated"})
        elif isinstance(event, ev.ResponseCreate):
            if self.task is not None and not self.task.done():
                await self.error(
                    "invalid_request_error",
                    "conversation_already_has_active_response",
                    "a response is in progress",
                    event.event_id,
                )
                return
            self.modalities = (event.response or {}).get("modalities")
            await self.start_response(event.event_id)
        elif isinstance(event, ev.ResponseCancel):
            await self.stop()

    def _configure_vad(self) -> None:
        """Server VAD as the session now says: off, or on with its prefix padding and silence
        wait (a change applies from the next frame; the VAD keeps its place in the audio)."""
        detection = self.config["audio"]["input"].get("turn_detection")
        if detection is None:
            self.vad = None
            return
        prefix = _ms(detection.get("prefix_padding_ms"), 300)
        silence = _ms(detection.get("silence_duration_ms"), 500)
        if self.vad is None:
            self.vad = EnergyVad(RATE, prefix_ms=prefix, silence_ms=silence)
        else:
            self.vad.prefix_ms, self.vad.silence_ms = prefix, silence

    async def append(self, pcm: bytes) -> None:
        self.buffer.extend(pcm)
        if self.vad is None:
            return
        detection = self.config["audio"]["input"]["turn_detection"] or {}
        for kind, ms in self.vad.feed(pcm):
            if kind == "started":
                self.speech_item = self.server.new_id("item")
                await self.send(
                    {"type": "input_audio_buffer.speech_started", "audio_start_ms": ms}
                    | {"item_id": self.speech_item}
                )
                if detection.get("interrupt_response", True):
                    await self.stop()  # barge-in: the response in progress is cancelled
            else:
                await self.send(
                    {"type": "input_audio_buffer.speech_stopped", "audio_end_ms": ms}
                    | {"item_id": self.speech_item}
                )
                await self.commit(self.speech_item)
                if detection.get("create_response", True):
                    await self.start_response(None)

    async def commit(self, item_id: str | None = None) -> None:
        """Commit the buffer as a user item (under server VAD: the item speech started)."""
        item_id = item_id or self.server.new_id("item")
        self.buffer.clear()
        self.committed.append(item_id)
        self.conversation.user_audio()
        await self.send({"type": "input_audio_buffer.committed", "item_id": item_id})
        item: dict[str, Any] = {"id": item_id, "type": "message", "role": "user"}
        item["content"] = [{"type": "input_audio", "transcript": None}]
        await self.send({"type": "conversation.item.added", "item": item})

    async def add_item(self, item: ev.ConversationItem) -> None:
        item.id = item.id or self.server.new_id("item")
        text = " ".join(p.text or p.transcript or "" for p in item.content or [])
        if item.type == "message" and item.role == "user":
            self.conversation.user_text(text)
        elif item.type == "message" and item.role == "assistant":
            self.conversation.assistant(text)
        elif item.type == "function_call" and item.call_id:
            try:
                arguments = json.loads(item.arguments or "{}")
            except json.JSONDecodeError:
                arguments = {}
            call = ScriptCall(item.name or "", arguments if isinstance(arguments, dict) else {})
            self.conversation.assistant(calls={item.call_id: call})
        elif item.type == "function_call_output" and item.call_id:
            self.conversation.result(item.call_id, item.output or "")
        await self.send({"type": "conversation.item.added", "item": item.dump()})

    # -- responses ------------------------------------------------------------------------

    async def start_response(self, trigger: str | None) -> None:
        """Open a response at once (so its ``response.created`` precedes anything the client
        sends next), then stream it in a task that ``response.cancel`` can stop."""
        self.server.responses += 1
        number, t0 = self.server.responses, time.perf_counter()
        faults = fault_kinds(self.server.faults, number)
        self.duplicate = "duplicate" in faults
        items, self.committed = self.committed, []
        refusal = next((_REFUSALS[k] for k in faults if k in _REFUSALS), None)
        if refusal is not None:
            await self.error(*refusal, trigger)
            return
        reply = self.conversation.reply(list(faults.values()))
        response: dict[str, Any] = {"id": self.server.new_id("resp"), "object": "realtime.response"}
        response.update(status="in_progress", output=[])
        await self.send({"type": "response.created", "response": response})
        self.task = asyncio.create_task(self.respond(response, reply, faults, items, t0))

    async def respond(
        self,
        response: dict[str, Any],
        reply: Reply,
        faults: dict[str, Fault],
        items: list[str],
        t0: float,
    ) -> None:
        # xAI transcribes committed user audio unasked; OpenAI when a model is configured.
        transcribe = bool(self.config["audio"]["input"].get("transcription"))
        transcribe = transcribe or self.server.dialect == "xai"
        if transcribe and not self.server.out_of_order:
            await self.user_transcripts(items)
        try:
            if "hang" in faults:
                await asyncio.sleep(3600)
            if reply.text:
                await self.server.prepare_speech(reply.text, RATE)  # ready beforehand
            await wait_until(t0 + self.server.ttfb)
            said = await self.speak(response, reply.text, t0, "drop" in faults)
            made = await self.call(response, reply.calls, "drop" in faults and not said)
            self.conversation.assistant(reply.text, made)
        except asyncio.CancelledError:
            response["status"] = "cancelled"
            with contextlib.suppress(ConnectionClosed):
                await self.send({"type": "response.done", "response": response})
            raise
        response.update(status="completed", usage=_usage(self.conversation.last_user_text, reply))
        await self.send({"type": "response.done", "response": response})
        if transcribe and self.server.out_of_order:
            await self.user_transcripts(items)
        self.duplicate = False

    async def user_transcripts(self, item_ids: list[str]) -> None:
        text = self.conversation.last_user_text
        for item_id in item_ids:
            event: dict[str, Any] = {
                "type": "conversation.item.input_audio_transcription.completed"
            }
            event |= {"item_id": item_id, "content_index": 0}
            if self.server.dialect == "xai":
                words = text.split(" ")
                partial = " ".join(words[: max(1, len(words) // 2)])
                await self.send(event | {"transcript": partial, "status": "in_progress"})
                event["status"] = "completed"
            await self.send(event | {"transcript": text, "usage": _transcription_usage(text)})

    async def drop(self) -> None:
        """Cut the connection without a close frame, as a network failure does."""
        self.ws.transport.abort()
        await asyncio.sleep(3600)

    async def call(
        self, response: dict[str, Any], calls: Sequence[ScriptCall], drop: bool
    ) -> dict[str, ScriptCall]:
        made: dict[str, ScriptCall] = {}
        for call in calls:
            call_id, arguments = self.server.new_id("call"), call.arguments_json()
            item: dict[str, Any] = {"id": self.server.new_id("item"), "type": "function_call"}
            item.update(status="completed", call_id=call_id, name=call.name, arguments=arguments)
            where = {"response_id": response["id"], "output_index": len(response["output"])}
            await self.send({"type": "response.output_item.added", **where, "item": item})
            if drop:
                await self.drop()
            arguments_where = {**where, "item_id": item["id"], "call_id": call_id}
            await self.send(
                {"type": "response.function_call_arguments.delta", **arguments_where}
                | {"delta": arguments}
            )
            await self.send(
                {"type": "response.function_call_arguments.done", **arguments_where}
                | {"name": call.name, "arguments": arguments}
            )
            await self.send({"type": "response.output_item.done", **where, "item": item})
            response["output"].append(item)
            made[call_id] = call
        return made

    async def speak(self, response: dict[str, Any], text: str, t0: float, drop: bool) -> bool:
        if not text:
            return False
        audio_out = "audio" in (self.modalities or self.config.get("output_modalities", ["audio"]))
        kind = "output_audio_transcript" if audio_out else "output_text"
        item: dict[str, Any] = {
            "id": self.server.new_id("item"),
            "type": "message",
            "role": "assistant",
        }
        item.update(status="in_progress", content=[])
        where = {"response_id": response["id"], "output_index": len(response["output"])}
        part_where = {**where, "item_id": item["id"], "content_index": 0}
        await self.send({"type": "response.output_item.added", **where, "item": item})
        await self.send({"type": "conversation.item.added", "item": item})
        part = {"type": "audio", "transcript": ""} if audio_out else {"type": "text", "text": ""}
        await self.send({"type": "response.content_part.added", **part_where, "part": part})
        words = _words(text)
        chunks = self.server.speech(text, RATE)
        chunks = chunks if audio_out else (b"",) * len(words)
        sent, held = 0, []
        for i, chunk in enumerate(chunks):
            if i:
                # Yield even with no spacing: the client may share this event loop, and a
                # burst sent without yielding would reach it only after the last chunk.
                await asyncio.sleep(self.server.chunk)
            if audio_out:
                if i == 0:
                    self.server.first_audio_delays.append(time.perf_counter() - t0)
                await self.send(
                    {"type": "response.output_audio.delta", **part_where, "delta": b64encode(chunk)}
                )
            due = round(len(words) * (i + 1) / len(chunks))
            for j in range(sent, due):
                if self.server.out_of_order and j == len(words) - 1 and j > 0:
                    held.append(words[j])  # delivered after the .done below
                    continue
                await self.send({"type": f"response.{kind}.delta", **part_where, "delta": words[j]})
            sent = due
            if drop:
                await self.drop()
        if audio_out:
            await self.send({"type": "response.output_audio.done", **part_where})
        final = {"transcript": text} if audio_out else {"text": text}
        await self.send({"type": f"response.{kind}.done", **part_where, **final})
        for word in held:
            await self.send({"type": f"response.{kind}.delta", **part_where, "delta": word})
        done_part = (
            {"type": "audio", "transcript": text} if audio_out else {"type": "text", "text": text}
        )
        await self.send({"type": "response.content_part.done", **part_where, "part": done_part})
        # Item content parts are typed output_audio / output_text; response parts audio / text.
        content = {**done_part, "type": f"output_{done_part['type']}"}
        item.update(status="completed", content=[content])
        await self.send({"type": "response.output_item.done", **where, "item": item})
        await self.send({"type": "conversation.item.done", "item": item})
        response["output"].append(item)
        return True


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w if i == 0 else " " + w for i, w in enumerate(words)]


def _usage(user_text: str, reply: Reply) -> dict[str, Any]:
    said = len(reply.text.split()) + 5 * len(reply.calls)
    heard = len(user_text.split()) + 1
    return {
        "total_tokens": said + heard,
        "input_tokens": heard,
        "output_tokens": said,
        "input_token_details": {"cached_tokens": 0, "text_tokens": heard, "audio_tokens": 0},
        "output_token_details": {"text_tokens": said, "audio_tokens": said},
    }


def _transcription_usage(text: str) -> dict[str, Any]:
    """A transcription's token usage (``usage`` is required on ``...completed``)."""
    heard = len(text.split()) + 1
    return {
        "type": "tokens",
        "input_tokens": heard,
        "output_tokens": heard,
        "total_tokens": 2 * heard,
    }


def _refuse_session(sent: dict[str, Any], dialect: str) -> tuple[str, str, str] | None:
    """``(code, message, param)`` of the error the service answers ``session.update`` with
    (fields as sent), or None when it takes it."""
    if dialect == "xai":
        undocumented = xai_undocumented(sent)
        if undocumented:
            # The xAI voice agent guide's session parameters are all it takes.
            where = undocumented[0]
            return "unknown_parameter", f"Unknown parameter: '{where}'.", where
        return None
    top_level = [k for k in ("voice", "turn_detection") if k in sent]
    if top_level:
        where = f"session.{top_level[0]}"
        return "unknown_parameter", f"Unknown parameter: '{where}'.", where
    if "type" not in sent:
        # GA reference: session.type ("realtime" | "transcription") is required.
        return (
            "missing_required_parameter",
            "Missing required parameter: 'session.type'.",
            "session.type",
        )
    for side in ("input", "output"):
        fmt = ((sent.get("audio") or {}).get(side) or {}).get("format") or {}
        if fmt.get("type", "audio/pcm") == "audio/pcm" and fmt.get("rate", RATE) != RATE:
            # GA reference: audio/pcm is 24 kHz PCM16; its rate takes 24000 only.
            where = f"session.audio.{side}.format.rate"
            message = f"Invalid value: {fmt['rate']}. Supported values are: {RATE}."
            return "invalid_value", message, where
    return None


def _nest_xai_fields(update: dict[str, Any]) -> dict[str, Any]:
    """xAI's top-level ``voice`` / ``turn_detection`` in the places OpenAI keeps them
    (``turn_detection: {"type": null}``, xAI's manual turns, as OpenAI's ``null``)."""
    update = dict(update)
    audio = update.setdefault("audio", {})
    if "voice" in update:
        audio.setdefault("output", {})["voice"] = update.pop("voice")
    if "turn_detection" in update:
        detection = update.pop("turn_detection")
        manual = detection is None or detection.get("type") is None
        audio.setdefault("input", {})["turn_detection"] = None if manual else detection
    return update


def _merge(target: dict[str, Any], update: dict[str, Any]) -> None:
    """Apply a ``session.update`` the way the server does: present fields replace, and an
    object of another ``type`` (``server_vad`` → ``semantic_vad``) replaces the old one whole."""
    for key, value in update.items():
        current = target.get(key)
        if (
            isinstance(value, dict)
            and isinstance(current, dict)
            and current.get("type") == value.get("type")
        ):
            _merge(target[key], value)
        else:
            target[key] = value


# -- judge mode ------------------------------------------------------------------------------


class FakeRealtimeJudgeServer(FakeOpenAIRealtimeServer):
    """The realtime fake acting as an audio judge (``voxbench.testing.audio_judge``).

    The script is an ``AudioJudgeScript``, or any ``Script`` whose replies are answered in
    order, the last one repeating (``voxbench fake-server openai-realtime-judge --script
    answers.yaml``). A judge
    session must turn detection off (``turn_detection: null``): with it on, a
    ``response.create`` is refused with an ``error`` event (``judge_turn_detection_on``). It
    buffers every appended chunk, and on ``input_audio_buffer.commit`` + ``response.create``
    hands the script the session's instructions, the text items and the whole committed
    audio, then answers with one text message (``response.output_text.*``, then
    ``response.done`` carrying it). Server faults by response number: ``hang`` never
    answers, ``drop`` cuts the socket, ``server_error`` / ``rate_limit`` / ``unauthorized``
    refuse with an ``error`` event. ``judgments`` records each request as the server saw it.
    """

    def __init__(self, script: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(script, *args, **kwargs)
        self.judgments: list[dict[str, Any]] = []
        """Per ``response.create``: turn detection, appends, committed bytes, modalities."""
        self.last_answer = ""

    def new_session(self, ws: ServerConnection) -> _Session:
        return _JudgeSession(self, ws)


class _JudgeSession(_Session):
    def __init__(self, server: FakeOpenAIRealtimeServer, ws: ServerConnection) -> None:
        super().__init__(server, ws)
        self.texts: list[str] = []
        self.heard = bytearray()
        self.appends = 0

    async def handle(self, event: ev.ClientEvent) -> None:
        if isinstance(event, ev.InputAudioBufferAppend):
            self.appends += 1
        elif isinstance(event, ev.InputAudioBufferCommit) and self.buffer:
            self.heard.extend(self.buffer)
        elif isinstance(event, ev.ConversationItemCreate):
            self.texts += [p.text or p.transcript or "" for p in event.item.content or []]
        await super().handle(event)

    async def start_response(self, trigger: str | None) -> None:
        server = self.server
        assert isinstance(server, FakeRealtimeJudgeServer)
        detection = self.config["audio"]["input"].get("turn_detection")
        modalities = self.config.get("output_modalities")
        server.judgments.append(
            {
                "turn_detection": detection,
                "appends": self.appends,
                "committed_bytes": len(self.heard),
                "output_modalities": modalities,
            }
        )
        if detection is not None:
            await self.error(
                "invalid_request_error",
                "judge_turn_detection_on",
                "judge mode: turn detection must be off (turn_detection: null)",
                trigger,
            )
            return
        server.responses += 1
        faults = fault_kinds(server.faults, server.responses)
        refusal = next((_REFUSALS[k] for k in faults if k in _REFUSALS), None)
        if refusal is not None:
            await self.error(*refusal, trigger)
            return
        if "hang" in faults:
            return  # never answers: the client's response timeout decides
        # In a task, as every response is, so that closing the server cancels a drop's wait.
        self.task = asyncio.create_task(self.judge("drop" in faults))

    async def judge(self, drop: bool) -> None:
        if drop:
            await self.drop()
        server = self.server
        assert isinstance(server, FakeRealtimeJudgeServer)  # _JudgeSession's only server
        pcm = np.frombuffer(bytes(self.heard), dtype="<i2").astype(np.float32) / 32768.0
        if isinstance(server.script, AudioJudgeScript):
            text = server.script.judge(
                str(self.config.get("instructions") or ""), "\n".join(self.texts), pcm, RATE
            )
        else:  # a plain script (``voxbench fake-server --script``): its replies, in order
            try:
                text = server.script.reply(self.conversation.messages).text
            except ScriptExhausted:
                text = server.last_answer  # the last reply answers every later request
        server.last_answer = text
        await self.answer_text(text)

    async def answer_text(self, text: str) -> None:
        response: dict[str, Any] = {"id": self.server.new_id("resp"), "object": "realtime.response"}
        response.update(status="in_progress", output=[])
        await self.send({"type": "response.created", "response": response})
        item: dict[str, Any] = {
            "id": self.server.new_id("item"),
            "type": "message",
            "role": "assistant",
        }
        item.update(status="in_progress", content=[])
        where = {"response_id": response["id"], "output_index": 0}
        part_where = {**where, "item_id": item["id"], "content_index": 0}
        await self.send({"type": "response.output_item.added", **where, "item": item})
        await self.send(
            {
                "type": "response.content_part.added",
                **part_where,
                "part": {"type": "text", "text": ""},
            }
        )
        for word in _words(text):
            await self.send({"type": "response.output_text.delta", **part_where, "delta": word})
        await self.send({"type": "response.output_text.done", **part_where, "text": text})
        await self.send(
            {
                "type": "response.content_part.done",
                **part_where,
                "part": {"type": "text", "text": text},
            }
        )
        item.update(status="completed", content=[{"type": "output_text", "text": text}])
        await self.send({"type": "response.output_item.done", **where, "item": item})
        response.update(status="completed", output=[item], usage=_usage("", Reply(text=text)))
        await self.send({"type": "response.done", "response": response})


def _ms(value: Any, default: int) -> int:
    """A turn-detection duration in ms (0 is one); the server's default when not given."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else default
