"""A fake Gemini API: ``models/{model}:generateContent`` and ``:streamGenerateContent``.

Follows the Gemini API reference (v1beta "Generating content", "Function calling",
"Thought signatures"; as published 2025–2026): the key in ``x-goog-api-key`` (or
``?key=``); ``?alt=sse`` streams ``data:`` lines of ``GenerateContentResponse`` with no
terminator; function calls come whole in one part with ``id``/``name``/``args`` and the
first call of a step carries a ``thoughtSignature``; ``usageMetadata`` holds running
totals. It checks what the real API checks: as many ``functionResponse`` parts as the
previous model turn had calls and, for ``gemini-3*`` models, a thought signature on the
first function call of every model step, and a body whose fields the API knows
(``Unknown name "..."``, as its JSON parser says; snake_case names are accepted, as by any
proto JSON parser) with ``temperature`` in [0, 2] and ``topP`` in [0, 1]: each refusal a 400
``INVALID_ARGUMENT``. A ``malformed_args`` fault answers
``finishReason: MALFORMED_FUNCTION_CALL`` (arguments are structured JSON on this API, so a
broken call is reported this way instead).
"""

from __future__ import annotations

import base64
import itertools
import json
from typing import Any

from voxbench.testing.http_server import (
    Request,
    Responder,
    ScriptedServer,
    count_tokens,
    describe_audio_part,
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

STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


class FakeGeminiServer(ScriptedServer):
    """``async with FakeGeminiServer(script) as server: …`` then ``base_url=server.url``."""

    url_path = "/v1beta"
    provider = "gemini"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "error": {
                "code": status,
                "message": message,
                "status": STATUS_NAMES.get(status, "UNKNOWN"),
            }
        }

    async def handle(self, request: Request, responder: Responder) -> None:
        prefix = "/v1beta/models/"
        model, _, method = request.path.removeprefix(prefix).partition(":")
        if (
            not request.path.startswith(prefix)
            or method not in ("generateContent", "streamGenerateContent")
            or request.method != "POST"
        ):
            await responder.send(404, self.error_body(404, f"no route {request.path}"))
            return
        presented = request.headers.get("x-goog-api-key") or request.query.get("key")
        if self.api_key is not None and presented != self.api_key:
            # Google answers a bad key with 400 INVALID_ARGUMENT, not 401.
            await responder.send(
                400, self.error_body(400, "API key not valid. Please pass a valid API key.")
            )
            return
        _, faults = self.begin(request)
        if await self.refuse(responder, faults):
            return
        body = request.json()
        try:
            if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
                raise ValueError("contents is required")
            check_request(body)
            conversation = parse_contents(
                body["contents"], require_signatures=model.startswith("gemini-3")
            )
            reply = self.script.reply(conversation)
        except (ValueError, ScriptExhausted) as exc:
            await responder.send(400, self.error_body(400, str(exc)))
            return
        prompt_tokens = count_tokens(json.dumps(body, ensure_ascii=False))
        chunks = self._chunks(reply, model, prompt_tokens, faults)
        if method == "generateContent":
            await self.wait_first()
            if any(f.kind == "drop" for f in faults):
                await responder.drop()
            await responder.send(200, _merge(chunks))
            return
        if request.query.get("alt") != "sse":
            await responder.send(400, self.error_body(400, "the fake streams only with alt=sse"))
            return
        twice = any(f.kind == "duplicate" for f in faults)
        drop = any(f.kind == "drop" for f in faults)
        await responder.start(200, "text/event-stream")
        await self.wait_first()
        for i, (chunk, structural) in enumerate(chunks):
            if i:
                await self.wait_between()
            frame = "data: " + json.dumps(chunk) + "\r\n\r\n"
            await responder.write(frame)
            if structural and twice:
                await responder.write(frame)
            if drop:
                await responder.drop()
        await responder.end()

    def _chunks(
        self, reply: Reply, model: str, prompt_tokens: int, faults: list[Fault]
    ) -> list[tuple[dict[str, Any], bool]]:
        """The response as stream chunks, each flagged structural (duplicated by that fault)."""
        response_id = f"fake-{next(self._ids)}"
        out_tokens = 0

        def chunk(
            parts: list[dict[str, Any]], finish: str | None = None, **extra: Any
        ) -> dict[str, Any]:
            candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
            if finish:
                candidate["finishReason"] = finish
            candidate.update(extra)
            usage = {
                "promptTokenCount": prompt_tokens,
                "candidatesTokenCount": out_tokens,
                "totalTokenCount": prompt_tokens + out_tokens,
            }
            return {
                "candidates": [candidate],
                "usageMetadata": usage,
                "modelVersion": model,
                "responseId": response_id,
            }

        chunks: list[tuple[dict[str, Any], bool]] = []
        for piece in split_text(reply.text):
            out_tokens += count_tokens(piece)
            chunks.append((chunk([{"text": piece}]), False))
        if reply.calls and any(f.kind == "malformed_args" for f in faults):
            broken = "; ".join(f"{c.name}({c.arguments_json()[:-1]}" for c in reply.calls)
            chunks.append(
                (
                    chunk(
                        [],
                        "MALFORMED_FUNCTION_CALL",
                        finishMessage=f"Malformed function call: {broken}",
                    ),
                    True,
                )
            )
            return chunks
        if reply.calls:
            parts = []
            for i, call in enumerate(reply.calls):
                part: dict[str, Any] = {
                    "functionCall": {
                        "id": f"fc-{next(self._ids)}",
                        "name": call.name,
                        "args": call.arguments,
                    }
                }
                if i == 0:
                    signature = base64.b64encode(f"sig-{response_id}".encode()).decode()
                    part["thoughtSignature"] = signature
                parts.append(part)
                out_tokens += count_tokens(call.name + json.dumps(call.arguments))
            chunks.append((chunk(parts), True))
        chunks.append((chunk([], reply.stop_reason or "STOP"), True))
        return chunks


def _merge(chunks: list[tuple[dict[str, Any], bool]]) -> dict[str, Any]:
    """The non-streaming response: every chunk's parts in one candidate."""
    last = json.loads(json.dumps(chunks[-1][0]))
    parts = [p for c, _ in chunks for p in c["candidates"][0]["content"]["parts"]]
    last["candidates"][0]["content"]["parts"] = parts
    return last


_CONTENT = {"role": None, "parts": None}
_FIELDS: dict[str, Any] = {
    "contents": _CONTENT,
    "systemInstruction": _CONTENT,
    "tools": {
        k: None
        for k in (
            "functionDeclarations",
            "googleSearch",
            "googleSearchRetrieval",
            "codeExecution",
            "urlContext",
            "googleMaps",
            "fileSearch",
            "computerUse",
        )
    },
    "toolConfig": None,
    "safetySettings": None,
    "cachedContent": None,
    "generationConfig": {
        k: None
        for k in (
            "stopSequences",
            "responseMimeType",
            "responseSchema",
            "responseJsonSchema",
            "responseModalities",
            "candidateCount",
            "maxOutputTokens",
            "temperature",
            "topP",
            "topK",
            "seed",
            "presencePenalty",
            "frequencyPenalty",
            "responseLogprobs",
            "logprobs",
            "enableEnhancedCivicAnswers",
            "speechConfig",
            "thinkingConfig",
            "imageConfig",
            "mediaResolution",
        )
    },
}
"""``GenerateContentRequest``'s fields (the v1beta reference), to the depth the fake checks
(None: any value)."""
_RANGES = {"temperature": (0.0, 2.0), "topP": (0.0, 1.0)}
"""The documented ranges of ``generationConfig`` numbers."""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


def check_request(body: dict[str, Any]) -> None:
    """Refuse (``ValueError``, a 400) an unknown field or an out-of-range number."""
    _check_fields(body, _FIELDS, "")
    config = body.get("generationConfig", body.get("generation_config")) or {}
    for key, value in config.items():
        bounds = _RANGES.get(_camel(key))
        if bounds is None or not isinstance(value, int | float):
            continue
        low, high = bounds
        if not low <= value <= high:
            raise ValueError(
                f"* GenerateContentRequest.generation_config.{key}: {value} is out of range "
                f"[{low}, {high}]"
            )


def _check_fields(value: Any, schema: dict[str, Any], where: str) -> None:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, dict):
            continue
        for key, inner in item.items():
            name = _camel(key)
            if name not in schema:
                at = f" at '{where.rstrip('.')}'" if where else ""
                raise ValueError(
                    f'Invalid JSON payload received. Unknown name "{key}"{at}: Cannot find field.'
                )
            if schema[name] is not None:
                _check_fields(inner, schema[name], f"{where}{key}.")


def parse_contents(contents: list[Any], *, require_signatures: bool = False) -> list[ScriptMessage]:
    """``contents`` → the script's conversation; ``ValueError`` where the real API answers 400."""
    out: list[ScriptMessage] = []
    expected = 0  # function calls of the previous model turn awaiting responses
    for i, content in enumerate(contents):
        if not isinstance(content, dict) or not isinstance(content.get("parts"), list):
            raise ValueError(f"contents[{i}].parts is required")
        role = content.get("role", "user")
        parts = [p for p in content["parts"] if isinstance(p, dict)]
        if role == "model":
            calls = [p for p in parts if "functionCall" in p]
            if require_signatures and calls and not calls[0].get("thoughtSignature"):
                raise ValueError(
                    f"Function call is missing a thought_signature in functionCall parts "
                    f"(contents[{i}]). This is required for tools to work correctly."
                )
            text = "".join(p.get("text", "") for p in parts if not p.get("thought"))
            out.append(
                ScriptMessage(
                    role="assistant",
                    text=text,
                    calls=tuple(
                        ScriptCall(
                            c["functionCall"].get("name", ""), c["functionCall"].get("args") or {}
                        )
                        for c in calls
                    ),
                )
            )
            expected = len(calls)
        elif role in ("user", "function"):
            responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
            if responses or expected:
                if len(responses) != expected:
                    raise ValueError(
                        "Please ensure that the number of function response parts is equal to the "
                        "number of function call parts of the function call turn."
                    )
                out.append(
                    ScriptMessage(
                        role="tool",
                        results=tuple(
                            ToolOutcome(r.get("id", ""), r.get("name", ""), r.get("response"))
                            for r in responses
                        ),
                    )
                )
                expected = 0
            text = "".join(_user_part_text(p, i) for p in parts)
            if text:
                out.append(ScriptMessage(role="user", text=text))
        else:
            raise ValueError(f"contents[{i}].role must be user or model")
    return out


def _user_part_text(part: dict[str, Any], index: int) -> str:
    """A user part as script text: its text, or ``[audio: …]`` for an ``inline_data`` WAV."""
    inline = part.get("inline_data") or part.get("inlineData")
    if inline is None:
        return str(part.get("text", ""))
    mime = inline.get("mime_type") or inline.get("mimeType") or ""
    if not str(mime).startswith("audio/"):
        raise ValueError(f"contents[{index}]: unsupported inline_data mime type {mime!r}")
    if mime in ("audio/wav", "audio/x-wav"):
        return describe_audio_part(inline.get("data"), f"contents[{index}].inline_data.data")
    return "[audio]"
