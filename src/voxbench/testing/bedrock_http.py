"""A fake Amazon Bedrock runtime: ``POST /model/{modelId}/converse-stream`` and ``/converse``.

Follows the Bedrock API Reference (``Converse``, ``ConverseStream``, ``ConverseStreamOutput``;
as published 2025–2026) and the AWS event stream encoding
(``application/vnd.amazon.eventstream``): each message is a prelude (total length,
headers length, CRC32), headers (``:event-type``, ``:content-type``, ``:message-type``;
type 7 = string), a JSON payload and a CRC32 of the whole. Errors before the stream are
HTTP statuses with ``x-amzn-ErrorType`` and ``{"message"}``. Requests must be SigV4-signed
(the signature itself is not checked). botocore pointed at ``url`` talks to it unchanged.

A Claude model id (``anthropic.claude-…``, an inference profile) gets the Anthropic fake's
per-model checks (``anthropic_http.check_model_fields``: sampling parameters on the models that
dropped them, thinking rules), answered as Bedrock relays a model's refusal: a 400
``ValidationException`` "The model returned the following errors: …". Prompt caching follows
the Bedrock user guide ("Prompt caching"): the request's content up to its last ``cachePoint``
(tools, then system, then messages), when at least ``cache_min_tokens`` long, is written to
the cache on first sight (``usage.cacheWriteInputTokens``) and read on later requests
(``cacheReadInputTokens``); ``inputTokens`` counts the rest, as Bedrock's ``TokenUsage`` does.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import struct
import zlib
from typing import Any

from voxbench.testing.anthropic_http import check_model_fields
from voxbench.testing.http_server import (
    Request,
    Responder,
    ScriptedServer,
    count_tokens,
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

ERROR_TYPES = {
    400: "ValidationException",
    401: "UnrecognizedClientException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    429: "ThrottlingException",
    500: "InternalServerException",
}


def encode_event(event_type: str, payload: dict[str, Any], message_type: str = "event") -> bytes:
    """One AWS event-stream message."""
    headers = b""
    names = {":event-type" if message_type == "event" else ":exception-type": event_type,
             ":content-type": "application/json", ":message-type": message_type}  # fmt: skip
    for name, value in names.items():
        raw = value.encode()
        headers += bytes([len(name)]) + name.encode() + b"\x07" + struct.pack(">H", len(raw)) + raw
    body = json.dumps(payload).encode()
    total = 12 + len(headers) + len(body) + 4
    prelude = struct.pack(">II", total, len(headers))
    message = prelude + struct.pack(">I", zlib.crc32(prelude)) + headers + body
    return message + struct.pack(">I", zlib.crc32(message))


class FakeBedrockServer(ScriptedServer):
    """``async with FakeBedrockServer(script) as server: …`` then ``base_url=server.url``."""

    provider = "bedrock"

    def __init__(
        self, *args: Any, strict: bool = True, cache_min_tokens: int = 1024, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)
        self.strict = strict
        """Refuse what Bedrock refuses: ``toolResult.status`` for the families that do not
        take it, and the fields a Claude model refuses (``check_claude_request``)."""
        self.cache_min_tokens = cache_min_tokens
        """The shortest prefix cached (the guide's minimum for Claude Sonnet: 1,024 tokens)."""
        self._cache: set[str] = set()

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"message": message}

    async def refuse(self, responder: Responder, faults: list[Fault]) -> bool:
        for fault in faults:
            if fault.kind == "hang":
                await responder.hang()
            status = {"rate_limit": 429, "server_error": 500, "unauthorized": 403}.get(fault.kind)
            if status is not None:
                kind = "UnrecognizedClientException" if status == 403 else ERROR_TYPES[status]
                await self._error(responder, status, kind, f"injected fault: {fault.kind}")
                return True
        return False

    async def _error(self, responder: Responder, status: int, kind: str, message: str) -> None:
        await responder.send(
            status,
            {"message": message},
            headers={"x-amzn-errortype": f"{kind}:http://internal.amazon.com/"},
        )

    async def handle(self, request: Request, responder: Responder) -> None:
        parts = request.path.strip("/").split("/")
        if (
            len(parts) != 3
            or parts[0] != "model"
            or parts[2] not in ("converse", "converse-stream")
        ):
            await self._error(
                responder, 404, "ResourceNotFoundException", f"no route {request.path}"
            )
            return
        if not request.headers.get("authorization", "").startswith("AWS4-HMAC-SHA256"):
            await self._error(
                responder,
                403,
                "MissingAuthenticationTokenException",
                "Missing Authentication Token",
            )
            return
        _, faults = self.begin(request)
        if await self.refuse(responder, faults):
            return
        body = request.json()
        try:
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("messages: required")
            if self.strict and not _takes_status(parts[1]):
                _refuse_status(body["messages"])
            if self.strict:
                check_claude_request(parts[1], body)
            reply = self.scripted_reply(parse_messages(body["messages"]), faults)
        except (ValueError, ScriptExhausted) as exc:
            await self._error(responder, 400, "ValidationException", str(exc))
            return
        events = self._events(reply, self._input_usage(body))
        if parts[2] == "converse":
            await self.wait_first()
            await responder.send(200, _whole(events))
            return
        twice = any(f.kind == "duplicate" for f in faults)
        drop = any(f.kind == "drop" for f in faults)
        await responder.start(200, "application/vnd.amazon.eventstream")
        waited = False
        for kind, payload, content in events:
            if content and not waited:
                await self.wait_first()
                waited = True
            elif content:
                await self.wait_between()
            frame = encode_event(kind, payload)
            await responder.write(frame)
            if twice and not content:
                await responder.write(frame)
            if drop and content:
                await responder.drop()
        await responder.end()

    def _input_usage(self, body: dict[str, Any]) -> dict[str, int]:
        """``inputTokens`` and the cache counts of one request."""
        total = count_tokens(json.dumps(body))
        blocks = [
            *((body.get("toolConfig") or {}).get("tools") or []),
            *(body.get("system") or []),
            *(b for m in body["messages"] for b in (m.get("content") or [])),
        ]
        last = max((i for i, b in enumerate(blocks) if "cachePoint" in b), default=None)
        prefix = json.dumps(blocks[:last]) if last is not None else ""
        cached = count_tokens(prefix)
        if last is None or cached < self.cache_min_tokens:
            return {"inputTokens": total}
        key = hashlib.sha256(prefix.encode()).hexdigest()
        field = "cacheReadInputTokens" if key in self._cache else "cacheWriteInputTokens"
        self._cache.add(key)
        return {"inputTokens": max(total - cached, 0), field: cached}

    def _events(
        self, reply: Reply, input_usage: dict[str, int]
    ) -> list[tuple[str, dict[str, Any], bool]]:
        """``(event type, payload, is content)`` in stream order."""
        events: list[tuple[str, dict[str, Any], bool]] = [
            ("messageStart", {"role": "assistant"}, False)
        ]
        index = 0
        if reply.text:
            for piece in split_text(reply.text):
                events.append(
                    ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}}, True)
                )
            events.append(("contentBlockStop", {"contentBlockIndex": 0}, False))
            index = 1
        for call in reply.calls:
            tool = {"toolUseId": f"tooluse_fake{next(self._ids):05d}", "name": call.name}
            events.append(
                (
                    "contentBlockStart",
                    {"contentBlockIndex": index, "start": {"toolUse": tool}},
                    False,
                )
            )
            for piece in split_json(call.arguments_json()):
                delta = {"toolUse": {"input": piece}}
                events.append(
                    ("contentBlockDelta", {"contentBlockIndex": index, "delta": delta}, True)
                )
            events.append(("contentBlockStop", {"contentBlockIndex": index}, False))
            index += 1
        stop = reply.stop_reason or ("tool_use" if reply.calls else "end_turn")
        output = count_tokens(reply.text) + sum(
            count_tokens(c.name + c.arguments_json()) for c in reply.calls
        )
        usage = {
            **input_usage,
            "outputTokens": output,
            "totalTokens": sum(input_usage.values()) + output,
        }
        events.append(("messageStop", {"stopReason": stop}, False))
        events.append(("metadata", {"usage": usage, "metrics": {"latencyMs": 1}}, False))
        return events


def _whole(events: list[tuple[str, dict[str, Any], bool]]) -> dict[str, Any]:
    """The non-streaming ``Converse`` answer assembled from the stream events."""
    content: list[dict[str, Any]] = []
    text = "".join(p["delta"].get("text", "") for k, p, _ in events if k == "contentBlockDelta")
    if text:
        content.append({"text": text})
    for kind, payload, _ in events:
        if kind == "contentBlockStart":
            tool = dict(payload["start"]["toolUse"])
            raw = "".join(
                p["delta"]["toolUse"]["input"]
                for k, p, _ in events
                if k == "contentBlockDelta"
                and p["contentBlockIndex"] == payload["contentBlockIndex"]
            )
            tool["input"] = json.loads(raw)
            content.append({"toolUse": tool})
    stop = next(p["stopReason"] for k, p, _ in events if k == "messageStop")
    metadata = next(p for k, p, _ in events if k == "metadata")
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": stop,
        "usage": metadata["usage"],
        "metrics": metadata["metrics"],
    }


def check_claude_request(model_id: str, body: dict[str, Any]) -> None:
    """A Claude model's refusals (``ValueError`` as Bedrock words them), its Converse fields
    named as the Messages API's; nothing for the other families."""
    if "anthropic.claude" not in model_id.lower():
        return
    inference = body.get("inferenceConfig") or {}
    extra = body.get("additionalModelRequestFields") or {}
    choice = (body.get("toolConfig") or {}).get("toolChoice") or {}
    fields = {
        "temperature": inference.get("temperature"),
        "top_p": inference.get("topP"),
        "top_k": extra.get("top_k"),
        "thinking": extra.get("thinking"),
        "max_tokens": inference.get("maxTokens", 4096),
        "tool_choice": {"type": next(iter(choice))} if choice else None,
    }
    try:
        check_model_fields(model_id, fields)
    except ValueError as exc:
        raise ValueError(f"The model returned the following errors: {exc}") from None


def _takes_status(model_id: str) -> bool:
    return "anthropic.claude" in model_id.lower() or "amazon.nova" in model_id.lower()


def _refuse_status(messages: list[Any]) -> None:
    for i, m in enumerate(messages):
        for b in (m.get("content") or []) if isinstance(m, dict) else []:
            if isinstance(b, dict) and "status" in (b.get("toolResult") or {}):
                raise ValueError(
                    f"messages.{i}: This model doesn't support the toolResult.status field. "
                    "Remove toolResult.status and retry your request."
                )


def parse_messages(messages: list[Any]) -> list[ScriptMessage]:
    """Converse ``messages`` → the script's conversation; ``ValueError`` where Bedrock says 400."""
    out: list[ScriptMessage] = []
    pending: dict[str, str] = {}
    previous = None
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        blocks = (
            [b for b in (m.get("content") or []) if isinstance(b, dict)]
            if isinstance(m, dict)
            else []
        )
        if role == previous:
            raise ValueError(
                f"messages.{i}: a conversation must alternate between user and assistant roles"
            )
        previous = role
        if role == "assistant":
            if pending:
                raise ValueError(
                    f"messages.{i}: toolUse blocks without toolResult blocks: {sorted(pending)}"
                )
            calls = []
            for b in blocks:
                if "toolUse" in b:
                    use = b["toolUse"]
                    calls.append(ScriptCall(use.get("name", ""), use.get("input") or {}))
                    pending[use.get("toolUseId", "")] = use.get("name", "")
            text = "".join(b.get("text", "") for b in blocks)
            out.append(ScriptMessage(role="assistant", text=text, calls=tuple(calls)))
        elif role == "user":
            results = []
            for b in blocks:
                if "toolResult" in b:
                    result = b["toolResult"]
                    tool_id = result.get("toolUseId")
                    if tool_id not in pending:
                        raise ValueError(
                            f"messages.{i}: toolResult for unknown toolUseId {tool_id!r}"
                        )
                    value = next(
                        (c["json"] for c in result.get("content") or [] if "json" in c), None
                    )
                    results.append(ToolOutcome(tool_id, pending.pop(tool_id), value))
            if pending:
                raise ValueError(
                    f"messages.{i}: toolUse blocks without toolResult blocks: {sorted(pending)}"
                )
            if results:
                out.append(ScriptMessage(role="tool", results=tuple(results)))
            text = "".join(b.get("text", "") for b in blocks)
            if text:
                out.append(ScriptMessage(role="user", text=text))
        else:
            raise ValueError(f"messages.{i}.role: must be user or assistant")
    return out
