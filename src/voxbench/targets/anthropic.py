"""Anthropic Messages API (streaming, tools) as a Session: ``anthropic/<model>``.

Protocol (Claude API docs "Messages" and "Streaming messages", API version header
``anthropic-version: 2023-06-01``, as published 2025–2026): ``POST {base}/v1/messages``
with ``x-api-key``; ``stream: true`` answers named SSE events: ``message_start`` (a Message
with empty content and initial ``usage``), per content block ``content_block_start``
(``text`` or ``tool_use`` with ``id``/``name``), ``content_block_delta`` (``text_delta`` or
``input_json_delta.partial_json``), ``content_block_stop``; then ``message_delta``
(``stop_reason`` and *cumulative* ``usage``) and ``message_stop``; ``ping`` may appear
anywhere and ``error`` (e.g. ``overloaded_error``) may replace the rest. Tool results go
back in the next ``user`` message as ``tool_result`` blocks, which must come first in it.

Extended thinking (option ``thinking``): a response may open with ``thinking`` blocks
(``thinking_delta`` then ``signature_delta``) or ``redacted_thinking`` blocks (``data``).
With tools, the docs require them passed back unchanged, signatures included, at the start
of the assistant message whose ``tool_use`` the next request answers (else 400); a step
keeps them (``ChatMessage.native``) and renders them first.

Options the model refuses (``providers.claude_models``: sampling parameters on Opus 4.7 and
later, thinking with ``temperature`` / ``top_k`` / a forced ``tool_choice``, a budget under
1,024 tokens or budget thinking on an adaptive-only model) are a ``ConfigError`` naming the
option when the session is made, before the first turn, not a 400 on every turn.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from voxbench.core.errors import ErrorCategory
from voxbench.core.events import AssistantTextDelta, TargetError, ToolCallRequested, Usage
from voxbench.core.session import Session
from voxbench.providers.anthropic import BASE_URL_VARS, DEFAULT_BASE_URL
from voxbench.providers.anthropic import headers as anthropic_headers
from voxbench.providers.claude_models import check_options
from voxbench.providers.http import iter_sse
from voxbench.targets import stop_reasons
from voxbench.targets.chat_session import ChatSession, Emit, StepFailed, StepResult
from voxbench.targets.registry import TargetContext, TargetProvider, register_provider
from voxbench.targets.text_history import ChatMessage, parse_arguments, result_text, safe_call_id

DEFAULT_MAX_TOKENS = 1024
PASSTHROUGH_OPTIONS = ("temperature", "top_p", "top_k", "tool_choice", "thinking", "metadata")


@dataclass
class _Block:
    type: str
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    signature: str = ""
    data: str = ""
    """A ``redacted_thinking`` block's encrypted content."""

    def thinking(self) -> dict[str, Any] | None:
        """The block as it must go back, when it is a thinking block."""
        if self.type == "thinking":
            return {
                "type": "thinking",
                "thinking": "".join(self.parts),
                "signature": self.signature,
            }
        if self.type == "redacted_thinking":
            return {"type": "redacted_thinking", "data": self.data}
        return None


class AnthropicSession(ChatSession):
    """A Session over the Messages API."""

    provider = "anthropic"
    stop_reasons = stop_reasons.ANTHROPIC
    key_vars = ("ANTHROPIC_API_KEY",)

    def body(self) -> dict[str, Any]:
        """The request body for the conversation so far."""
        assert self.setup is not None
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": int(self.options.get("max_tokens", DEFAULT_MAX_TOKENS)),
            "system": self.setup.system_prompt,
            "messages": render_messages(self.conversation),
            "stream": True,
        }
        if self.setup.tools:
            body["tools"] = [
                {"name": t.name, "description": t.description, "input_schema": t.parameters}
                for t in self.setup.tools
            ]
        for key in PASSTHROUGH_OPTIONS:
            if key in self.options:
                body[key] = self.options[key]
        return body

    async def request_step(self, emit: Emit) -> StepResult:
        request = self.client.build_request(
            "POST",
            f"{self.base_url}/v1/messages",
            headers=anthropic_headers(self.api_key),
            json=self.body(),
        )
        response = await self.client.send(request, stream=True)
        try:
            await self.check_response(response)
            return await self._parse_stream(response, emit)
        finally:
            await response.aclose()

    async def _parse_stream(self, response: Any, emit: Emit) -> StepResult:
        blocks: dict[int, _Block] = {}
        usage: dict[str, int] = {}
        stop_reason: str | None = None
        started = stopped = False
        async for sse in iter_sse(response):
            try:
                data = sse.json()
            except ValueError:
                raise self.protocol_error(f"event is not JSON: {sse.data[:80]!r}") from None
            kind = data.get("type", sse.event)
            if stopped or kind == "ping":
                continue  # nothing follows message_stop (a repeated one is ignored)
            if kind == "error":
                raise StepFailed(_stream_error(data.get("error") or {}))
            if kind == "message_start":
                if not started:  # a repeated message_start must not reset the blocks
                    started = True
                    usage.update(_int_fields((data.get("message") or {}).get("usage")))
            elif kind == "content_block_start":
                index = data.get("index", len(blocks))
                if index not in blocks:
                    block = data.get("content_block") or {}
                    blocks[index] = _Block(
                        type=block.get("type", ""),
                        id=block.get("id", ""),
                        name=block.get("name", ""),
                        signature=block.get("signature", ""),
                        data=block.get("data", ""),
                    )
            elif kind == "content_block_delta":
                block = blocks.get(data.get("index", -1))
                delta = data.get("delta") or {}
                if block is None:
                    raise self.protocol_error("content_block_delta for a block never started")
                if delta.get("type") == "text_delta" and delta.get("text"):
                    block.parts.append(delta["text"])
                    emit(AssistantTextDelta(text=delta["text"]))
                elif delta.get("type") == "input_json_delta":
                    block.parts.append(delta.get("partial_json", ""))
                elif delta.get("type") == "thinking_delta":
                    block.parts.append(delta.get("thinking", ""))
                elif delta.get("type") == "signature_delta":
                    block.signature = delta.get("signature", "")
            elif kind == "message_delta":
                stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
                usage.update(_int_fields(data.get("usage")))  # cumulative: replace, not add
            elif kind == "message_stop":
                stopped = True
        if not stopped:
            raise self.protocol_error("the stream ended before message_stop")
        if usage:
            emit(
                Usage(
                    input_tokens=usage.get("input_tokens", 0)
                    + usage.get("cache_read_input_tokens", 0)
                    + usage.get("cache_creation_input_tokens", 0),
                    output_tokens=usage.get("output_tokens", 0),
                    cached_input_tokens=usage.get("cache_read_input_tokens", 0),
                )
            )
        text = "".join("".join(b.parts) for _, b in sorted(blocks.items()) if b.type == "text")
        calls: list[ToolCallRequested] = []
        for _, block in sorted(blocks.items()):
            if block.type != "tool_use":
                continue
            raw = "".join(block.parts)
            arguments, error = parse_arguments(raw)
            calls.append(
                ToolCallRequested(
                    call_id=block.id or f"toolu_{len(self.conversation)}_{len(calls)}",
                    name=block.name,
                    arguments=arguments,
                    raw_arguments=raw if error else None,
                    parse_error=error,
                )
            )
        thinking = [t for _, b in sorted(blocks.items()) if (t := b.thinking()) is not None]
        return StepResult(text=text, calls=calls, native=thinking or None, stop_reason=stop_reason)


def _int_fields(usage: Any) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    return {k: int(v) for k, v in usage.items() if isinstance(v, int | float) and v is not None}


def _stream_error(error: dict[str, Any]) -> TargetError:
    kind = error.get("type", "error")
    message = f"anthropic stream error {kind}: {error.get('message', '')}"
    if kind == "rate_limit_error":
        return TargetError(category=ErrorCategory.RATE_LIMIT, message=message, retryable=True)
    if kind in ("overloaded_error", "api_error"):
        return TargetError(category=ErrorCategory.SERVER, message=message, retryable=True)
    return TargetError(category=ErrorCategory.BAD_REQUEST, message=message)


def render_messages(conversation: list[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as Messages API ``messages`` (strictly alternating roles)."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)  # tool results and the next user words merge
        else:
            out.append({"role": role, "content": blocks})

    for message in conversation:
        if message.role == "user":
            add("user", [{"type": "text", "text": message.text}] if message.text else [])
            continue
        # Thinking blocks go back first and unchanged (their signatures are checked).
        blocks: list[dict[str, Any]] = list(message.native or [])
        if message.text:
            blocks.append({"type": "text", "text": message.text})
        blocks += [
            {
                "type": "tool_use",
                "id": safe_call_id(c.call_id),
                "name": c.name,
                "input": c.arguments,
            }
            for c in message.calls
        ]
        add("assistant", blocks)
        add(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": safe_call_id(c.call_id),
                    "content": result_text(c.result),
                    **({"is_error": True} if _is_error(c.result) else {}),
                }
                for c in message.calls
            ],
        )
    return out


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and result.get("status") == "error"


def _anthropic(context: TargetContext) -> Session:
    base_url = context.base_url or os.environ.get(BASE_URL_VARS[0]) or DEFAULT_BASE_URL
    model = context.model or "claude-sonnet-4-5"
    request = {"max_tokens": DEFAULT_MAX_TOKENS} | {
        k: context.options[k] for k in PASSTHROUGH_OPTIONS + ("max_tokens",) if k in context.options
    }
    check_options(f"anthropic/{model}", model, request)
    return AnthropicSession(
        model, base_url=base_url, options=context.options, target_name=f"anthropic/{model}"
    )


register_provider(
    TargetProvider(
        name="anthropic",
        factory=_anthropic,
        description="Anthropic Messages API (streaming, tools)",
        kind="text",
        env_vars=("ANTHROPIC_API_KEY",),
        default_model="claude-sonnet-4-5",
    )
)
