"""OpenAI Chat Completions and the OpenAI-compatible providers (Azure, OpenRouter, Groq, …).

Protocol (OpenAI API reference, "Chat Completions" create + streaming chunk object, as
published 2025–2026): ``POST {base}/chat/completions`` with ``stream: true`` answers
``text/event-stream``; each ``data:`` line is a ``chat.completion.chunk`` whose
``choices[0].delta`` carries ``content`` pieces and ``tool_calls`` fragments keyed by
``index`` (the first fragment of a call has ``id``, ``type`` and ``function.name``; later
ones append to ``function.arguments``); ``finish_reason`` is set on the last choice chunk;
with ``stream_options: {include_usage: true}`` one extra chunk with empty ``choices``
carries ``usage``; the stream ends with ``data: [DONE]``. Tool results go back as
``{"role": "tool", "tool_call_id", "content"}`` messages after the assistant message that
holds the ``tool_calls``.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from voxbench.core.errors import PrerequisiteError
from voxbench.core.events import AssistantTextDelta, ToolCallRequested, Usage
from voxbench.core.session import Session
from voxbench.providers.http import iter_sse
from voxbench.providers.openai_compat import (
    AZURE,
    COMPATIBLE_PROVIDERS,
    CompatibleProvider,
    auth_headers,
    chat_completions_url,
)
from voxbench.targets.chat_session import ChatSession, Emit, StepResult
from voxbench.targets.registry import (
    SessionFactory,
    TargetContext,
    TargetProvider,
    register_provider,
)
from voxbench.targets.text_history import ChatMessage, parse_arguments, result_text

__all__ = [
    "COMPATIBLE_PROVIDERS",
    "AzureOpenAIChatSession",
    "CompatibleProvider",
    "OpenAIChatSession",
    "render_messages",
]

PASSTHROUGH_OPTIONS = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "seed",
    "reasoning_effort",
    "parallel_tool_calls",
    "tool_choice",
    "service_tier",
)
"""Target options copied into the request body as they are."""


@dataclass
class _CallSlot:
    id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class OpenAIChatSession(ChatSession):
    """A Session over ``/chat/completions`` (streaming by default; ``stream: false`` option)."""

    provider = "openai"
    key_vars: tuple[str, ...] = ("OPENAI_API_KEY",)

    # -- request ------------------------------------------------------------------------------

    def url(self) -> str:
        """Where the request goes."""
        return chat_completions_url(self.provider, self.base_url, self.model, self.options)

    def headers(self) -> dict[str, str]:
        """Request headers (auth included)."""
        return auth_headers(self.provider, self.api_key)

    def body(self, stream: bool) -> dict[str, Any]:
        """The request body for the conversation so far."""
        assert self.setup is not None
        body: dict[str, Any] = {
            "model": self.model,
            "messages": render_messages(self.setup.system_prompt, self.conversation),
        }
        if self.setup.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    },
                }
                for t in self.setup.tools
            ]
        if stream:
            body["stream"] = True
            if self.options.get("include_usage", True):
                body["stream_options"] = {"include_usage": True}
        for key in PASSTHROUGH_OPTIONS:
            if key in self.options:
                body[key] = self.options[key]
        body.update(self.options.get("extra_body") or {})
        return body

    async def request_step(self, emit: Emit) -> StepResult:
        stream = bool(self.options.get("stream", True))
        request = self.client.build_request(
            "POST", self.url(), headers=self.headers(), json=self.body(stream)
        )
        response = await self.client.send(request, stream=True)
        try:
            await self.check_response(response)
            if not stream:
                return self._parse_message(json.loads(await response.aread()), emit)
            return await self._parse_stream(response, emit)
        finally:
            await response.aclose()

    # -- response -------------------------------------------------------------------------------

    async def _parse_stream(self, response: Any, emit: Emit) -> StepResult:
        text: list[str] = []
        slots: dict[int, _CallSlot] = {}
        finish: str | None = None
        usage: dict[str, Any] | None = None
        done = False
        async for sse in iter_sse(response):
            if sse.data.strip() == "[DONE]":
                done = True
                break  # anything after the terminator (a duplicated chunk) is ignored
            try:
                chunk = sse.json()
            except ValueError:
                raise self.protocol_error(f"chunk is not JSON: {sse.data[:80]!r}") from None
            if isinstance(chunk.get("error"), dict):  # some gateways report failures in-stream
                message = chunk["error"].get("message", "error")
                raise self.protocol_error(f"error in stream: {message}")
            if chunk.get("usage"):
                usage = chunk["usage"]  # cumulative: a repeated usage chunk is not added twice
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    text.append(delta["content"])
                    emit(AssistantTextDelta(text=delta["content"]))
                for fragment in delta.get("tool_calls") or []:
                    _add_fragment(slots, fragment)
                finish = finish or choice.get("finish_reason")
        if not done and finish is None:
            raise self.protocol_error("the stream ended before the response finished")
        if usage:
            emit(_usage(usage))
        calls = self._calls(slots)
        return StepResult(
            text="".join(text), calls=calls, native=_raw_arguments(calls), stop_reason=finish
        )

    def _parse_message(self, data: dict[str, Any], emit: Emit) -> StepResult:
        choices = data.get("choices") or []
        if not choices:
            raise self.protocol_error("response has no choices")
        message = choices[0].get("message") or {}
        content = message.get("content") or ""
        if content:
            emit(AssistantTextDelta(text=content))
        if data.get("usage"):
            emit(_usage(data["usage"]))
        slots = {
            i: _CallSlot(
                id=c.get("id"),
                name=(c.get("function") or {}).get("name", ""),
                arguments=[(c.get("function") or {}).get("arguments") or ""],
            )
            for i, c in enumerate(message.get("tool_calls") or [])
        }
        calls = self._calls(slots)
        return StepResult(
            text=content,
            calls=calls,
            native=_raw_arguments(calls),
            stop_reason=choices[0].get("finish_reason"),
        )

    def _calls(self, slots: dict[int, _CallSlot]) -> list[ToolCallRequested]:
        calls: list[ToolCallRequested] = []
        seen: set[str] = set()
        fresh = itertools.count(1)
        for _, slot in sorted(slots.items()):
            if not slot.name:
                raise self.protocol_error("a tool call arrived without a function name")
            call_id = slot.id or f"call_{len(self.conversation)}_{next(fresh)}"
            if call_id in seen:
                continue
            seen.add(call_id)
            raw = "".join(slot.arguments)
            arguments, error = parse_arguments(raw)
            calls.append(
                ToolCallRequested(
                    call_id=call_id,
                    name=slot.name,
                    arguments=arguments,
                    raw_arguments=raw if error else None,
                    parse_error=error,
                )
            )
        return calls


def _add_fragment(slots: dict[int, _CallSlot], fragment: dict[str, Any]) -> None:
    """Fold one streamed ``tool_calls`` fragment into the call it belongs to."""
    call_id = fragment.get("id")
    index = fragment.get("index")
    if index is None:  # some compatible servers omit index: match by id, else a new call
        index = next((i for i, s in slots.items() if call_id and s.id == call_id), len(slots))
    slot = slots.setdefault(index, _CallSlot())
    function = fragment.get("function") or {}
    if call_id and slot.id == call_id:
        return  # the opening fragment again (a duplicated chunk): already counted
    if call_id:
        slot.id = call_id
    if function.get("name"):
        slot.name = function["name"] if call_id else slot.name + function["name"]
    if function.get("arguments"):
        slot.arguments.append(function["arguments"])


def _raw_arguments(calls: list[ToolCallRequested]) -> dict[str, str]:
    # Malformed arguments go back verbatim in the follow-up request, so the model sees the
    # JSON it actually sent next to the error result.
    return {c.call_id: c.raw_arguments for c in calls if c.raw_arguments is not None}


def _usage(usage: dict[str, Any]) -> Usage:
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        cached_input_tokens=int(prompt_details.get("cached_tokens") or 0),
        audio_input_tokens=int(prompt_details.get("audio_tokens") or 0),
        audio_output_tokens=int(completion_details.get("audio_tokens") or 0),
    )


def render_messages(system_prompt: str, conversation: list[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as Chat Completions ``messages``."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt}]
    for message in conversation:
        if message.role == "user":
            messages.append({"role": "user", "content": message.text})
            continue
        if not message.calls:
            messages.append({"role": "assistant", "content": message.text})
            continue
        raw = message.native or {}
        messages.append(
            {
                "role": "assistant",
                "content": message.text or None,
                "tool_calls": [
                    {
                        "id": call.call_id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": raw.get(call.call_id, json.dumps(call.arguments)),
                        },
                    }
                    for call in message.calls
                ],
            }
        )
        for call in message.calls:
            messages.append(
                {"role": "tool", "tool_call_id": call.call_id, "content": result_text(call.result)}
            )
    return messages


# -- providers --------------------------------------------------------------------------------


def _compatible_factory(spec: CompatibleProvider) -> SessionFactory:
    """The registry factory of one OpenAI-compatible provider."""

    def factory(context: TargetContext) -> Session:
        base_url = context.base_url or os.environ.get(spec.base_url_var) or spec.base_url
        if not base_url:
            raise PrerequisiteError(
                f"{spec.name} needs an endpoint: pass --base-url (e.g. http://host:port/v1) "
                f"or set {spec.base_url_var}"
            )
        session = OpenAIChatSession(
            context.model or spec.default_model or "",
            base_url=base_url,
            options=context.options,
            target_name=f"{spec.name}/{context.model}",
        )
        session.provider = spec.name
        session.key_vars = spec.key_vars
        session.key_required = spec.key_required
        return session

    return factory


class AzureOpenAIChatSession(OpenAIChatSession):
    """Azure OpenAI: a deployment URL, an ``api-version`` and an ``api-key`` header.

    The URL and header conventions live in ``providers.openai_compat``.
    """

    provider = AZURE
    key_vars = ("AZURE_OPENAI_API_KEY",)

    def body(self, stream: bool) -> dict[str, Any]:
        body = super().body(stream)
        body.pop("model")  # the deployment in the URL names the model
        return body


def _azure(context: TargetContext) -> Session:
    endpoint = context.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
    if not endpoint:
        raise PrerequisiteError(
            "azure-openai needs its endpoint: set AZURE_OPENAI_ENDPOINT "
            "(https://<resource>.openai.azure.com) or pass --base-url"
        )
    if not context.model:
        raise PrerequisiteError("azure-openai needs a deployment name: azure-openai/<deployment>")
    return AzureOpenAIChatSession(context.model, base_url=endpoint, options=context.options)


for _spec in COMPATIBLE_PROVIDERS:
    register_provider(
        TargetProvider(
            name=_spec.name,
            factory=_compatible_factory(_spec),
            description="OpenAI Chat Completions" if _spec.name == "openai" else _spec.description,
            kind="text",
            env_vars=_spec.key_vars,
            default_model=_spec.default_model,
        )
    )
register_provider(
    TargetProvider(
        name="azure-openai",
        factory=_azure,
        description="Azure OpenAI chat deployments (azure-openai/<deployment>)",
        kind="text",
        env_vars=("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"),
    )
)
