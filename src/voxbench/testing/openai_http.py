"""A fake OpenAI-compatible HTTP API: chat completions, transcriptions and speech.

Speaks the wire protocol of the OpenAI API reference (Chat Completions, Audio; as published
2025–2026): ``POST …/chat/completions`` streaming (SSE chunks, ``tool_calls`` fragments by
index, ``stream_options.include_usage``, ``[DONE]``) and not; ``POST …/audio/transcriptions``
(multipart, answers ``{"text"}``); ``POST …/audio/speech`` (``pcm``: raw 24 kHz mono PCM16,
or ``wav``). Any path ending in those names is served, so Azure's
``/openai/deployments/<d>/chat/completions?api-version=…`` works too. Requests that break
the documented rules (a ``tool`` message that answers no earlier call, a call left without
an answer) get the 400 the real API gives.
"""

from __future__ import annotations

import base64
import io
import itertools
import json
import re
import time
import wave
from collections.abc import Sequence
from typing import Any

import numpy as np

from voxbench.testing.audio_judge import AudioJudgeScript
from voxbench.testing.http_server import (
    Request,
    Responder,
    ScriptedServer,
    count_tokens,
    describe_audio_part,
    split_json,
    split_text,
)
from voxbench.testing.scripts import (
    Fault,
    Reply,
    ScriptCall,
    ScriptExhausted,
    ScriptMessage,
    ToolOutcome,
)

SPEECH_RATE = 24000
"""OpenAI's ``pcm`` speech format: 24 kHz, 16-bit signed little-endian, mono."""


class FakeOpenAIServer(ScriptedServer):
    """``async with FakeOpenAIServer(script) as server: …`` then ``base_url=server.url``."""

    url_path = "/v1"
    provider = "openai"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)
        self.transcriptions = 0

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        kinds = {
            400: "invalid_request_error",
            401: "invalid_request_error",
            404: "invalid_request_error",
            429: "rate_limit_exceeded",
            500: "server_error",
        }
        code = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status)
        return {"error": {"message": message, "type": kinds.get(status, "error"), "code": code}}

    async def handle(self, request: Request, responder: Responder) -> None:
        if request.method == "GET" and request.path.endswith("/models"):
            await responder.send(200, {"object": "list", "data": []})
            return
        route = next(
            (r for r in ("chat/completions", "audio/transcriptions", "audio/speech")
             if request.path.endswith("/" + r)),
            None,
        )  # fmt: skip
        if route is None or request.method != "POST":
            await responder.send(404, self.error_body(404, f"no route {request.path}"))
            return
        presented = request.headers.get("api-key") or _bearer(request.headers)
        if not await self.check_key(presented, responder):
            return
        number, faults = self.begin(request)
        if await self.refuse(responder, faults):
            return
        if route == "chat/completions":
            await self._chat(request, responder, faults)
        elif route == "audio/transcriptions":
            await self._transcription(request, responder, number)
        else:
            await self._speech(request, responder, faults)

    # -- chat ---------------------------------------------------------------------------------

    async def _chat(self, request: Request, responder: Responder, faults: list[Fault]) -> None:
        body = request.json()
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            await responder.send(400, self.error_body(400, "'messages' is a required property"))
            return
        if isinstance(self.script, AudioJudgeScript):
            await self._judge_chat(body, responder, faults)
            return
        try:
            conversation = parse_messages(body["messages"])
            reply = self.scripted_reply(conversation, faults)
        except (ValueError, ScriptExhausted) as exc:
            await responder.send(400, self.error_body(400, str(exc)))
            return
        model = body.get("model") or "fake-model"
        usage = _usage(body["messages"], reply)
        if "audio" in (body.get("modalities") or []):
            await self._spoken(body, responder, reply, model, usage, faults)
        elif body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            await self._stream(responder, reply, model, usage if include_usage else None, faults)
        else:
            await self._whole(responder, reply, model, usage, faults)

    async def _judge_chat(
        self, body: dict[str, Any], responder: Responder, faults: list[Fault]
    ) -> None:
        """Judge mode: the script hears the system text, the user/assistant texts and the
        ``input_audio`` clip, and its answer comes back with ``logprobs`` when asked."""
        assert isinstance(self.script, AudioJudgeScript)
        try:
            instructions, texts, audio, rate = judge_material(body["messages"])
        except ValueError as exc:
            await responder.send(400, self.error_body(400, str(exc)))
            return
        text = self.script.judge(instructions, texts, audio, rate)
        reply = Reply(text=text)
        await self.wait_first()
        if any(f.kind == "drop" for f in faults):
            await responder.drop()
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": text},
            "finish_reason": "stop",
        }
        if body.get("logprobs"):
            choice["logprobs"] = {
                "content": token_logprobs(text, self.script, int(body.get("top_logprobs") or 0))
            }
        await responder.send(
            200,
            {
                "id": f"chatcmpl-{next(self._ids)}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model") or "fake-model",
                "choices": [choice],
                "usage": _usage(body["messages"], reply),
            },
        )

    async def _spoken(
        self,
        body: dict[str, Any],
        responder: Responder,
        reply: Reply,
        model: str,
        usage: dict[str, Any],
        faults: list[Fault],
    ) -> None:
        """``modalities: ["text", "audio"]``: the reply spoken by eSpeak NG as
        ``message.audio`` (base64 WAV ``data`` and its ``transcript``), ``content`` null, as
        the API answers audio-output models. An empty scripted reply says nothing: no audio."""
        audio = body.get("audio")
        if not isinstance(audio, dict) or not audio.get("voice") or audio.get("format") != "wav":
            message = "'audio' must give a voice and format 'wav' when modalities has audio"
            await responder.send(400, self.error_body(400, message))
            return
        if body.get("stream"):
            message = "the fake server speaks whole (non-streamed) audio answers only"
            await responder.send(400, self.error_body(400, message))
            return
        message_body: dict[str, Any] = {"role": "assistant", "content": None, "refusal": None}
        if reply.text:
            message_body["audio"] = {
                "id": f"audio_{next(self._ids)}",
                "data": base64.b64encode(spoken_wav(reply.text)).decode("ascii"),
                "expires_at": int(time.time()) + 3600,
                "transcript": reply.text,
            }
        await self.wait_first()
        if any(f.kind == "drop" for f in faults):
            await responder.drop()
        await responder.send(200, self._completion(model, message_body, "stop", usage))

    def _call_ids(self, reply: Reply) -> list[str]:
        return [f"call_{next(self._ids):04d}" for _ in reply.calls]

    async def _whole(
        self, responder: Responder, reply: Reply, model: str, usage: dict, faults: list[Fault]
    ) -> None:
        await self.wait_first()
        if any(f.kind == "drop" for f in faults):
            await responder.drop()
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.calls:
            message["tool_calls"] = [
                {"id": cid, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments_json()}}
                for cid, c in zip(self._call_ids(reply), reply.calls, strict=True)
            ]  # fmt: skip
        await responder.send(200, self._completion(model, message, _finish(reply), usage))

    def _completion(
        self, model: str, message: dict[str, Any], finish_reason: str, usage: dict
    ) -> dict[str, Any]:
        """A whole ``chat.completion`` object with one choice."""
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage,
        }

    async def _stream(
        self,
        responder: Responder,
        reply: Reply,
        model: str,
        usage: dict | None,
        faults: list[Fault],
    ) -> None:
        twice = any(f.kind == "duplicate" for f in faults)
        drop = any(f.kind == "drop" for f in faults)
        base = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        async def send(choices: list[dict[str, Any]], structural: bool, **extra: Any) -> None:
            data = "data: " + json.dumps({**base, "choices": choices, **extra}) + "\n\n"
            await responder.write(data)
            if structural and twice:
                await responder.write(data)

        def delta(d: dict[str, Any], finish: str | None = None) -> list[dict[str, Any]]:
            return [{"index": 0, "delta": d, "logprobs": None, "finish_reason": finish}]

        await responder.start(200, "text/event-stream")
        await send(delta({"role": "assistant", "content": ""}), structural=True)
        await self.wait_first()
        first = True
        for piece in split_text(reply.text):
            if not first:
                await self.wait_between()
            await send(delta({"content": piece}), structural=False)
            first = False
            if drop:
                await responder.drop()
        for index, (call_id, call) in enumerate(
            zip(self._call_ids(reply), reply.calls, strict=True)
        ):
            if not first:
                await self.wait_between()
            opener = {"index": index, "id": call_id, "type": "function",
                      "function": {"name": call.name, "arguments": ""}}  # fmt: skip
            await send(delta({"tool_calls": [opener]}), structural=True)
            for piece in split_json(call.arguments_json()):
                fragment = {"index": index, "function": {"arguments": piece}}
                await send(delta({"tool_calls": [fragment]}), structural=False)
                first = False
                if drop:
                    await responder.drop()
        if drop:
            await responder.drop()
        await send(delta({}, _finish(reply)), structural=True)
        if usage is not None:
            await send([], structural=True, usage=usage)
        await responder.write("data: [DONE]\n\n")
        if twice:
            await responder.write("data: [DONE]\n\n")
        await responder.end()

    # -- audio --------------------------------------------------------------------------------

    async def _transcription(self, request: Request, responder: Responder, number: int) -> None:
        fields = parse_multipart(request)
        if "file" not in fields:
            await responder.send(400, self.error_body(400, "'file' is a required field"))
            return
        self.transcriptions += 1
        await self.wait_first()
        text = self.script.transcribe(self.transcriptions)
        fmt = fields.get("response_format", b"json").decode()
        if fmt == "text":
            await responder.send(200, text + "\n")
        else:
            await responder.send(200, {"text": text})

    async def _speech(self, request: Request, responder: Responder, faults: list[Fault]) -> None:
        body = request.json()
        if not isinstance(body, dict) or not isinstance(body.get("input"), str):
            await responder.send(400, self.error_body(400, "'input' is a required property"))
            return
        fmt = body.get("response_format", "mp3")
        if fmt not in ("pcm", "wav"):
            message = f"the fake server speaks pcm and wav, not {fmt!r}"
            await responder.send(400, self.error_body(400, message))
            return
        pcm = synthesize(body["input"])
        data = pcm if fmt == "pcm" else _wav(pcm)
        await responder.start(200, "audio/pcm" if fmt == "pcm" else "audio/wav")
        await self.wait_first()
        step = SPEECH_RATE // 10 * 2  # 100 ms of audio per chunk
        for i in range(0, len(data), step):
            if i:
                await self.wait_between()
            await responder.write(data[i : i + step])
            if any(f.kind == "drop" for f in faults):
                await responder.drop()
        await responder.end()


def _bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return value[7:] if value.lower().startswith("bearer ") else None


def _finish(reply: Reply) -> str:
    return reply.stop_reason or ("tool_calls" if reply.calls else "stop")


def _usage(messages: list[Any], reply: Reply) -> dict[str, Any]:
    prompt = sum(count_tokens(json.dumps(m, ensure_ascii=False)) for m in messages)
    completion = count_tokens(reply.text) + sum(
        count_tokens(c.name + c.arguments_json()) for c in reply.calls
    )
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
    }


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: text, and input_audio (base64 wav/mp3)
        out: list[str] = []
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "input_audio":
                audio = part.get("input_audio") or {}
                if audio.get("format") not in ("wav", "mp3"):
                    raise ValueError("input_audio.format must be wav or mp3")
                if audio.get("format") == "wav":
                    out.append(describe_audio_part(audio.get("data"), "input_audio.data"))
                continue
            out.append(part.get("text", ""))
        return "".join(out)
    return ""


def parse_messages(messages: Sequence[Any]) -> list[ScriptMessage]:
    """Chat Completions ``messages`` → the script's conversation; ``ValueError`` on a
    sequence the real API rejects."""
    out: list[ScriptMessage] = []
    open_calls: dict[str, str] = {}  # call id → name, awaiting a tool message
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        if role != "tool" and open_calls:
            raise ValueError(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {sorted(open_calls)}"
            )
        if role in ("system", "developer"):
            continue
        if role == "user":
            out.append(ScriptMessage(role="user", text=_content_text(m.get("content"))))
        elif role == "assistant":
            calls = []
            for call in m.get("tool_calls") or []:
                fn = call.get("function") or {}
                raw = fn.get("arguments") or ""
                try:
                    args = json.loads(raw) if raw else {}
                    calls.append(ScriptCall(fn.get("name", ""), args))
                except ValueError:
                    calls.append(ScriptCall(fn.get("name", ""), {}, raw_arguments=raw))
                open_calls[call.get("id", "")] = fn.get("name", "")
            out.append(
                ScriptMessage(
                    role="assistant", text=_content_text(m.get("content")), calls=tuple(calls)
                )
            )
        elif role == "tool":
            call_id = m.get("tool_call_id")
            if call_id not in open_calls:
                raise ValueError(
                    f"messages[{i}]: messages with role 'tool' must be a response to a "
                    "preceding message with 'tool_calls'"
                )
            content = _content_text(m.get("content"))
            try:
                result: Any = json.loads(content)
            except ValueError:
                result = content
            outcome = ToolOutcome(call_id, open_calls.pop(call_id), result)
            if out and out[-1].role == "tool":
                out[-1] = ScriptMessage(role="tool", results=(*out[-1].results, outcome))
            else:
                out.append(ScriptMessage(role="tool", results=(outcome,)))
        else:
            raise ValueError(f"messages[{i}]: unknown role {role!r}")
    return out


def parse_multipart(request: Request) -> dict[str, bytes]:
    """Fields of a ``multipart/form-data`` body (file fields give their bytes)."""
    content_type = request.headers.get("content-type", "")
    boundary = next(
        (p.split("=", 1)[1].strip('"') for p in content_type.split(";") if "boundary=" in p),
        None,
    )
    if not boundary:
        return {}
    fields: dict[str, bytes] = {}
    for part in request.body.split(b"--" + boundary.encode()):
        head, sep, value = part.partition(b"\r\n\r\n")
        if not sep:
            continue
        for line in head.decode("latin-1").split("\r\n"):
            if line.lower().startswith("content-disposition") and 'name="' in line:
                name = line.split('name="', 1)[1].split('"', 1)[0]
                fields[name] = value.removesuffix(b"\r\n")
    return fields


def synthesize(text: str, sample_rate: int = SPEECH_RATE) -> bytes:
    """Deterministic stand-in speech: one tone burst per word, 60 ms per character."""
    pieces = []
    for i, word in enumerate(text.split() or [""]):
        n = int(sample_rate * max(0.06 * len(word), 0.12))
        t = np.arange(n) / sample_rate
        tone = 0.2 * np.sin(2 * np.pi * (180 + 20 * (i % 5)) * t) * np.hanning(n)
        pieces += [tone, np.zeros(int(sample_rate * 0.05))]
    audio = np.concatenate(pieces)
    return (audio * 32767).astype("<i2").tobytes()


def spoken_wav(text: str) -> bytes:
    """``text`` spoken by eSpeak NG (en-us), as a 16-bit WAV file at eSpeak's rate."""
    from voxbench.audio.espeak import espeak_synthesize

    audio = espeak_synthesize(text)
    return _wav((np.clip(audio.samples, -1, 1) * 32767).astype("<i2").tobytes(), audio.sample_rate)


def _wav(pcm: bytes, rate: int = SPEECH_RATE) -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm)
    return buffer.getvalue()


def judge_material(messages: Sequence[Any]) -> tuple[str, str, np.ndarray, int]:
    """Chat ``messages`` as a judge hears them: system text, the other texts in order, and
    the first ``input_audio`` clip (mono float samples, rate); ``ValueError`` on bad audio."""
    import base64
    import binascii

    system: list[str] = []
    texts: list[str] = []
    audio, rate = np.zeros(0, np.float32), SPEECH_RATE
    for m in messages:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for part in parts:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "input_audio" and not len(audio):
                data = (part.get("input_audio") or {}).get("data")
                try:
                    with wave.open(io.BytesIO(base64.b64decode(str(data), validate=True))) as clip:
                        frames = clip.readframes(clip.getnframes())
                        width, channels = clip.getsampwidth(), clip.getnchannels()
                        rate = clip.getframerate()
                except (binascii.Error, wave.Error, EOFError) as exc:
                    raise ValueError(
                        f"input_audio.data is not base64 of a WAV file ({exc})"
                    ) from exc
                if width != 2:
                    raise ValueError("the fake judge hears 16-bit WAV only")
                pcm = np.frombuffer(frames, dtype="<i2").astype(np.float32) / 32768.0
                audio = pcm.reshape(-1, channels).mean(axis=1) if channels > 1 else pcm
            elif part.get("type", "text") == "text":
                (system if m.get("role") in ("system", "developer") else texts).append(
                    str(part.get("text") or "")
                )
    return "\n".join(system), "\n".join(texts), audio, rate


_TOKEN = re.compile(r"\s*\d|\s*[^\s\d]+|\s+")


def token_logprobs(text: str, script: AudioJudgeScript, top: int) -> list[dict[str, Any]]:
    """``logprobs.content`` for ``text``: one entry per token (a digit is a token of its
    own), p=1 unless the script gives alternatives for it."""
    out = []
    for token in _TOKEN.findall(text):
        alternatives = script.top_logprobs(token) or [(token, 0.0)]
        chosen = next((lp for t, lp in alternatives if t.strip() == token.strip()), 0.0)
        out.append(
            {
                "token": token,
                "logprob": chosen,
                "bytes": list(token.encode("utf-8")),
                "top_logprobs": [
                    {"token": t, "logprob": lp, "bytes": list(t.encode("utf-8"))}
                    for t, lp in alternatives[: max(top, 1)]
                ],
            }
        )
    return out
