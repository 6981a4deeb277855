"""A fake Anthropic Messages API: ``POST /v1/messages``, streaming and not, with tools.

Follows the Claude API docs ("Messages", "Streaming messages", "Tool use"; API version
``2023-06-01``, as published 2025–2026): named SSE events ``message_start``, ``ping``,
``content_block_start`` / ``content_block_delta`` (``text_delta``, ``input_json_delta``) /
``content_block_stop``, ``message_delta`` with cumulative ``usage``, ``message_stop``.
Errors are ``{"type": "error", "error": {"type", "message"}}``. It checks what the real API
checks: the ``anthropic-version`` header, ``max_tokens``, and that every ``tool_use`` is
answered by a ``tool_result`` at the start of the next user message.

A request with ``thinking: {"type": "enabled", ...}`` gets a ``thinking`` block first
(``thinking_delta``, then ``signature_delta``), and, as the extended-thinking docs say the
API does, a 400 when the assistant message whose ``tool_use`` is being answered does not
start with its thinking block passed back unchanged (the signature is checked).
``adaptive`` thinking is answered the same way.

It refuses, with the service's 400 (``invalid_request_error``), what the models refuse
(``check_model_fields``, its own reading of the Claude docs' per-model tables: the migration
guide's "Migrating to Claude Opus 4.7", "Configuring thinking" and "Extended thinking" →
"Feature compatibility"): sampling parameters on the models that dropped them, ``temperature``
with ``top_p`` from the 4.5 models on, budget thinking on adaptive-only models and adaptive
thinking on the models before it, a budget under 1,024 tokens or not under ``max_tokens``, and
thinking with ``temperature`` (other than 1), ``top_k``, ``top_p`` outside 0.95–1 or a
``tool_choice`` that forces a tool.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
from typing import Any

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

NO_SAMPLING = (
    "claude-opus-4-7", "claude-opus-4-8", "claude-opus-5", "claude-sonnet-5", "claude-haiku-5",
    "claude-fable", "claude-mythos",
)  # fmt: skip
"""Model id prefixes that answer any ``temperature`` / ``top_p`` / ``top_k`` with a 400; they
take adaptive thinking only."""
ONE_OF_TEMPERATURE_TOP_P = (
    "claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-5", "claude-opus-4-6",
    "claude-sonnet-4-6",
)  # fmt: skip
ADAPTIVE_TOO = ("claude-opus-4-6", "claude-sonnet-4-6")
"""Models that take both budget and adaptive thinking."""
NO_THINKING = ("claude-3-haiku", "claude-3-opus", "claude-3-sonnet", "claude-3-5")
ALWAYS_THINKS = ("claude-mythos-preview",)

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


class FakeAnthropicServer(ScriptedServer):
    """``async with FakeAnthropicServer(script) as server: …`` then ``base_url=server.url``."""

    provider = "anthropic"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ids = itertools.count(1)

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": ERROR_TYPES.get(status, "api_error"), "message": message},
        }

    async def handle(self, request: Request, responder: Responder) -> None:
        if request.path != "/v1/messages" or request.method != "POST":
            await responder.send(404, self.error_body(404, f"no route {request.path}"))
            return
        if not await self.check_key(request.headers.get("x-api-key"), responder):
            return
        _, faults = self.begin(request)
        if await self.refuse(responder, faults):
            return
        body = request.json()
        try:
            if not request.headers.get("anthropic-version"):
                raise ValueError("anthropic-version: header is required")
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                raise ValueError("messages: Field required")
            if not isinstance(body.get("max_tokens"), int):
                raise ValueError("max_tokens: Field required")
            check_model_fields(str(body.get("model", "")), body)
            kind = (body.get("thinking") or {}).get("type")
            thinking = kind in ("enabled", "adaptive")
            conversation = parse_messages(body["messages"], thinking=thinking)
            reply = self.scripted_reply(conversation, faults)
        except (ValueError, ScriptExhausted) as exc:
            await responder.send(400, self.error_body(400, str(exc)))
            return
        input_tokens = count_tokens(json.dumps(body, ensure_ascii=False))
        if body.get("stream"):
            await self._stream(
                responder, reply, body.get("model", ""), input_tokens, faults, thinking
            )
        else:
            await self.wait_first()
            if any(f.kind == "drop" for f in faults):
                await responder.drop()
            message = self._message(reply, body.get("model", ""), input_tokens)
            if thinking:
                message["content"].insert(0, thinking_block(reply))
            await responder.send(200, message)

    def _tool_ids(self, reply: Reply) -> list[str]:
        return [f"toolu_fake{next(self._ids):06d}" for _ in reply.calls]

    def _message(self, reply: Reply, model: str, input_tokens: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        for tool_id, call in zip(self._tool_ids(reply), reply.calls, strict=True):
            content.append(
                {"type": "tool_use", "id": tool_id, "name": call.name, "input": call.arguments}
            )
        return {
            "id": f"msg_fake{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.stop_reason or ("tool_use" if reply.calls else "end_turn"),
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": _output_tokens(reply)},
        }

    async def _stream(
        self,
        responder: Responder,
        reply: Reply,
        model: str,
        input_tokens: int,
        faults: list[Fault],
        thinking: bool = False,
    ) -> None:
        twice = any(f.kind == "duplicate" for f in faults)
        drop = any(f.kind == "drop" for f in faults)

        async def send(data: dict[str, Any], structural: bool = False) -> None:
            frame = f"event: {data['type']}\ndata: {json.dumps(data)}\n\n"
            await responder.write(frame)
            if structural and twice:
                await responder.write(frame)

        await responder.start(200, "text/event-stream; charset=utf-8")
        start = self._message(Reply(), model, input_tokens)
        start.update(
            content=[], stop_reason=None, usage={"input_tokens": input_tokens, "output_tokens": 1}
        )
        await send({"type": "message_start", "message": start}, structural=True)
        await send({"type": "ping"})
        await self.wait_first()
        index = 0
        first = True
        if thinking:
            block = thinking_block(reply)
            start_block = {"type": "thinking", "thinking": "", "signature": ""}
            await send(
                {"type": "content_block_start", "index": 0, "content_block": start_block}, True
            )
            for delta in (
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ):
                await send({"type": "content_block_delta", "index": 0, "delta": delta})
            await send({"type": "content_block_stop", "index": 0}, True)
            index = 1
        if reply.text:
            await send(
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
                True,
            )
            for piece in split_text(reply.text):
                if not first:
                    await self.wait_between()
                first = False
                await send(
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    }
                )
                if drop:
                    await responder.drop()
            await send({"type": "content_block_stop", "index": index}, True)
            index += 1
        for tool_id, call in zip(self._tool_ids(reply), reply.calls, strict=True):
            if not first:
                await self.wait_between()
            block = {"type": "tool_use", "id": tool_id, "name": call.name, "input": {}}
            await send(
                {"type": "content_block_start", "index": index, "content_block": block}, True
            )
            for piece in split_json(call.arguments_json()):
                delta = {"type": "input_json_delta", "partial_json": piece}
                await send({"type": "content_block_delta", "index": index, "delta": delta})
                first = False
                if drop:
                    await responder.drop()
            await send({"type": "content_block_stop", "index": index}, True)
            index += 1
        if drop:
            await responder.drop()
        stop = reply.stop_reason or ("tool_use" if reply.calls else "end_turn")
        await send(
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": _output_tokens(reply)},
            },
            True,
        )
        await send({"type": "message_stop"}, True)
        await responder.end()


def check_model_fields(model: str, body: dict[str, Any]) -> None:
    """``ValueError`` with the service's message where ``model`` refuses a field of ``body``
    (field names as the Messages API's; a Bedrock body is mapped by its caller)."""
    model = model[model.find("claude-") :] if "claude-" in model else model

    def among(prefixes: tuple[str, ...]) -> bool:
        return model.startswith(prefixes)

    sampling = [k for k in ("temperature", "top_p", "top_k") if body.get(k) is not None]
    if sampling and among(NO_SAMPLING):
        raise ValueError(f"`{sampling[0]}` is deprecated for this model.")
    if {"temperature", "top_p"} <= set(sampling) and among(ONE_OF_TEMPERATURE_TOP_P):
        raise ValueError(
            "`temperature` and `top_p` cannot both be specified for this model. "
            "Please use only one."
        )
    thinking = body.get("thinking") or {}
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind in ("enabled", "adaptive") and among(NO_THINKING):
        raise ValueError(f"thinking: '{model}' does not support thinking.")
    if kind == "enabled" and among(NO_SAMPLING):
        raise ValueError(
            '"thinking.type.enabled" is not supported for this model. Use '
            '"thinking.type.adaptive" and "output_config.effort" to control thinking behavior.'
        )
    if kind == "adaptive" and not among(NO_SAMPLING + ADAPTIVE_TOO):
        raise ValueError(f'"thinking.type.adaptive" is not supported for this model ({model}).')
    if kind == "disabled" and among(ALWAYS_THINKS):
        raise ValueError('"thinking.type.disabled" is not supported for this model.')
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int):
            raise ValueError("thinking.enabled.budget_tokens: Field required")
        if budget < 1024:
            raise ValueError(
                "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
            )
        if budget >= body.get("max_tokens", 0):
            raise ValueError("max_tokens: must be greater than thinking.budget_tokens")
    if kind in ("enabled", "adaptive") or (kind is None and among(ALWAYS_THINKS)):
        if body.get("temperature") not in (None, 1):
            raise ValueError(
                "`temperature` may only be set to 1 when thinking is enabled. Please consult "
                "our documentation at https://docs.claude.com/en/docs/build-with-claude/"
                "extended-thinking#feature-compatibility"
            )
        if body.get("top_k") is not None:
            raise ValueError("`top_k` must be unset when thinking is enabled.")
        top_p = body.get("top_p")
        if top_p is not None and not 0.95 <= top_p <= 1:
            raise ValueError("`top_p` must be between 0.95 and 1 when thinking is enabled.")
        choice = body.get("tool_choice") or {}
        if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
            raise ValueError("Thinking may not be enabled when tool_choice forces tool use.")


def signature_of(thinking: str) -> str:
    """The fake's signature of a thinking text (the real one is opaque; both are checked)."""
    return base64.b64encode(hashlib.sha256(thinking.encode()).digest()).decode()


def thinking_block(reply: Reply) -> dict[str, Any]:
    """The thinking block the fake model writes before ``reply``."""
    thinking = f"The user needs: {reply.text or ', '.join(c.name for c in reply.calls)}."
    return {"type": "thinking", "thinking": thinking, "signature": signature_of(thinking)}


def _check_thinking(blocks: list[dict[str, Any]], where: str) -> None:
    """What the API checks of the assistant message a tool result answers, thinking on."""
    first = blocks[0].get("type") if blocks else None
    if first not in ("thinking", "redacted_thinking"):
        raise ValueError(
            f"{where}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
            f"`{first}`. When `thinking` is enabled, a final `assistant` message must start "
            "with a thinking block"
        )
    for b in blocks:
        if b.get("type") == "thinking" and b.get("signature") != signature_of(
            b.get("thinking", "")
        ):
            raise ValueError(f"{where}: Invalid `signature` in `thinking` block")


def _output_tokens(reply: Reply) -> int:
    return count_tokens(reply.text) + sum(
        count_tokens(c.name + c.arguments_json()) for c in reply.calls
    )


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    raise ValueError("content must be a string or a list of content blocks")


def parse_messages(messages: list[Any], *, thinking: bool = False) -> list[ScriptMessage]:
    """Messages API ``messages`` → the script's conversation; ``ValueError`` where the real
    API answers 400."""
    last_assistant = max(
        (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "assistant"),
        default=None,
    )
    out: list[ScriptMessage] = []
    pending: dict[str, str] = {}  # tool_use id → name, to be answered by the next user message
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        blocks = _blocks(m.get("content") if isinstance(m, dict) else None)
        if role == "assistant":
            if pending:
                raise ValueError(
                    f"messages.{i}: tool_use ids were found without tool_result blocks"
                )
            uses_tools = any(b.get("type") == "tool_use" for b in blocks)
            if thinking and uses_tools and i == last_assistant:
                _check_thinking(blocks, f"messages.{i}")
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            calls = []
            for b in blocks:
                if b.get("type") == "tool_use":
                    if not isinstance(b.get("input"), dict):
                        raise ValueError(f"messages.{i}: tool_use.input must be an object")
                    calls.append(ScriptCall(b.get("name", ""), b["input"]))
                    pending[b.get("id", "")] = b.get("name", "")
            out.append(ScriptMessage(role="assistant", text=text, calls=tuple(calls)))
        elif role == "user":
            results, seen_other = [], False
            for b in blocks:
                if b.get("type") == "tool_result":
                    if seen_other:
                        raise ValueError(f"messages.{i}: tool_result blocks must come first")
                    tool_id = b.get("tool_use_id")
                    if tool_id not in pending:
                        raise ValueError(
                            f"messages.{i}: unexpected tool_use_id {tool_id!r} in tool_result "
                            "blocks: each tool_result must answer a tool_use of the previous message"
                        )
                    results.append(
                        ToolOutcome(tool_id, pending.pop(tool_id), _result(b.get("content")))
                    )
                else:
                    seen_other = True
            if pending:
                raise ValueError(
                    f"messages.{i}: tool_use ids were found without tool_result blocks"
                )
            if results:
                out.append(ScriptMessage(role="tool", results=tuple(results)))
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            if text:
                out.append(ScriptMessage(role="user", text=text))
        else:
            raise ValueError(f"messages.{i}.role: must be user or assistant")
    return out


def _result(content: Any) -> Any:
    if isinstance(content, list):
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    try:
        return json.loads(content)
    except (TypeError, ValueError):
        return content
