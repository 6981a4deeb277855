"""Google Gemini API (``generateContent`` family, function calling) as a Session:
``gemini/<model>``.

Protocol (Gemini API reference "Generating content" and the "Function calling" and
"Thought signatures" guides, v1beta, as published 2025–2026):
``POST {base}/models/{model}:streamGenerateContent?alt=sse`` with the key in the
``x-goog-api-key`` header answers SSE ``data:`` lines, each a whole
``GenerateContentResponse`` (``candidates[0].content.parts``: ``text`` or ``functionCall``
``{id?, name, args}``, possibly with a ``thoughtSignature``; ``finishReason`` on the last;
``usageMetadata`` running totals). There is no terminator event: the stream just ends.
Tool results go back as ``functionResponse {id?, name, response: object}`` parts in a
``user`` content. Gemini 3 models reject a function-call step sent back without its
thought signature, so steps keep their parts verbatim; steps rebuilt from history carry
the documented placeholder signature instead.
"""

from __future__ import annotations

import copy
from typing import Any

from voxbench.core.errors import ConfigError, ErrorCategory
from voxbench.core.events import AssistantTextDelta, TargetError, ToolCallRequested, Usage
from voxbench.core.session import Session
from voxbench.providers.gemini import DEFAULT_MODEL, KEY_VARS, gemini_base_url
from voxbench.providers.http import iter_sse
from voxbench.providers.registry import EnvVars
from voxbench.targets import stop_reasons
from voxbench.targets.chat_session import ChatSession, Emit, StepFailed, StepResult
from voxbench.targets.registry import TargetContext, TargetProvider, register_provider
from voxbench.targets.text_history import ChatMessage, result_object

PLACEHOLDER_SIGNATURE = "skip_thought_signature_validator"
"""What the Thought Signatures guide says to send for function calls the model did not
produce in this exchange (history rebuilt after a reconnect)."""
GENERATION_OPTIONS = {
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "max_tokens": "maxOutputTokens",
    "max_output_tokens": "maxOutputTokens",
    "seed": "seed",
    "thinking_config": "thinkingConfig",
}


class GeminiSession(ChatSession):
    """A Session over ``streamGenerateContent``."""

    provider = "gemini"
    stop_reasons = stop_reasons.GEMINI
    key_vars = KEY_VARS

    def body(self) -> dict[str, Any]:
        """The request body for the conversation so far."""
        assert self.setup is not None
        body: dict[str, Any] = {
            "contents": render_contents(self.conversation),
            "systemInstruction": {"parts": [{"text": self.setup.system_prompt}]},
        }
        if self.setup.tools:
            body["tools"] = [
                {
                    "functionDeclarations": [
                        {"name": t.name, "description": t.description, "parameters": t.parameters}
                        for t in self.setup.tools
                    ]
                }
            ]
        generation = {
            wire: self.options[key]
            for key, wire in GENERATION_OPTIONS.items()
            if key in self.options
        }
        if generation:
            body["generationConfig"] = generation
        return body

    async def request_step(self, emit: Emit) -> StepResult:
        url = f"{self.base_url}/models/{self.model}:streamGenerateContent"
        request = self.client.build_request(
            "POST",
            url,
            params={"alt": "sse"},
            headers={"content-type": "application/json", "x-goog-api-key": self.api_key or ""},
            json=self.body(),
        )
        response = await self.client.send(request, stream=True)
        try:
            await self.check_response(response)
            return await self._parse_stream(response, emit)
        finally:
            await response.aclose()

    async def _parse_stream(self, response: Any, emit: Emit) -> StepResult:
        parts: list[dict[str, Any]] = []
        seen_ids: set[str] = set()
        text: list[str] = []
        finish: str | None = None
        finish_message = ""
        usage: dict[str, Any] | None = None
        async for sse in iter_sse(response):
            try:
                chunk = sse.json()
            except ValueError:
                raise self.protocol_error(f"chunk is not JSON: {sse.data[:80]!r}") from None
            if isinstance(chunk.get("error"), dict):
                raise self.protocol_error(f"error in stream: {chunk['error'].get('message')}")
            if chunk.get("usageMetadata"):
                usage = chunk["usageMetadata"]  # running totals: keep the newest
            feedback = chunk.get("promptFeedback") or {}
            if feedback.get("blockReason") and not chunk.get("candidates"):
                finish = feedback["blockReason"]
            for candidate in (chunk.get("candidates") or [])[:1]:
                for part in (candidate.get("content") or {}).get("parts") or []:
                    call = part.get("functionCall")
                    if call is not None:
                        if call.get("id") and call["id"] in seen_ids:
                            continue  # the same call again (a duplicated chunk)
                        seen_ids.add(call.get("id") or "")
                    elif part.get("text") and not part.get("thought"):
                        text.append(part["text"])
                        emit(AssistantTextDelta(text=part["text"]))
                    parts.append(part)
                if candidate.get("finishReason"):
                    finish = candidate["finishReason"]
                    finish_message = candidate.get("finishMessage", "")
        if finish is None:
            raise self.protocol_error("the stream ended without a finishReason")
        if usage:
            emit(
                Usage(
                    input_tokens=int(usage.get("promptTokenCount") or 0),
                    output_tokens=int(usage.get("candidatesTokenCount") or 0)
                    + int(usage.get("thoughtsTokenCount") or 0),
                    cached_input_tokens=int(usage.get("cachedContentTokenCount") or 0),
                )
            )
        if finish == "MALFORMED_FUNCTION_CALL":
            # The model produced a call that does not parse; the API drops it and says so.
            raise StepFailed(
                TargetError(
                    category=ErrorCategory.MALFORMED_TOOL_CALL,
                    message=f"gemini: malformed function call: {finish_message[:200]}",
                    retryable=True,
                )
            )
        calls = []
        for i, part in enumerate(p for p in parts if "functionCall" in p):
            call = part["functionCall"]
            args = call.get("args") or {}
            calls.append(
                ToolCallRequested(
                    call_id=call.get("id") or f"gemini_call_{len(self.conversation)}_{i}",
                    name=call.get("name", ""),
                    arguments=args if isinstance(args, dict) else {},
                )
            )
        native = {"parts": parts, "ids": [c.call_id for c in calls]}
        return StepResult(text="".join(text), calls=calls, native=native, stop_reason=finish)


def render_contents(conversation: list[ChatMessage]) -> list[dict[str, Any]]:
    """The conversation as ``contents`` (``user`` / ``model`` roles, consecutive ones merged)."""
    out: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        if not parts:
            return
        if out and out[-1]["role"] == role:
            out[-1]["parts"].extend(parts)
        else:
            out.append({"role": role, "parts": parts})

    for message in conversation:
        if message.role == "user":
            add("user", [{"text": message.text}] if message.text else [])
            continue
        native = message.native if isinstance(message.native, dict) else None
        if native is not None:
            add("model", copy.deepcopy(native["parts"]))
            wire_ids = {
                c.call_id: bool(p["functionCall"].get("id"))
                for c, p in zip(
                    message.calls, [p for p in native["parts"] if "functionCall" in p], strict=False
                )
            }
        else:
            parts: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
            for i, call in enumerate(message.calls):
                part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.arguments}}
                if i == 0:
                    part["thoughtSignature"] = PLACEHOLDER_SIGNATURE
                parts.append(part)
            add("model", parts)
            wire_ids = {c.call_id: False for c in message.calls}
        responses = []
        for call in message.calls:
            response: dict[str, Any] = {"name": call.name, "response": result_object(call.result)}
            if wire_ids.get(call.call_id):
                response["id"] = call.call_id
            responses.append({"functionResponse": response})
        add("user", responses)
    return out


OPTION_RANGES = {"temperature": (0.0, 2.0), "top_p": (0.0, 1.0)}
"""The API's ranges for ``generationConfig.temperature`` / ``topP`` (v1beta reference); a
value outside is a 400 ``INVALID_ARGUMENT`` on every call, so it is refused up front."""


def check_option_ranges(model: str, options: dict[str, Any]) -> None:
    """Refuse a sampling option the API would refuse, naming the option."""
    for key, (low, high) in OPTION_RANGES.items():
        if key not in options:
            continue
        value = options[key]
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        if number is None or not low <= number <= high:
            raise ConfigError(
                f"gemini/{model}: {key} {value!r} is outside the Gemini API's range",
                field=f"target_options.{key}",
                expected=f"a number in [{low}, {high}]",
            )


def _gemini(context: TargetContext) -> Session:
    base_url = gemini_base_url(context.base_url)
    model = context.model or DEFAULT_MODEL
    check_option_ranges(model, context.options)
    return GeminiSession(
        model, base_url=base_url, options=context.options, target_name=f"gemini/{model}"
    )


register_provider(
    TargetProvider(
        name="gemini",
        factory=_gemini,
        description="Google Gemini API generateContent (streaming, function calling)",
        kind="text",
        env_vars=KEY_VARS,
        env=EnvVars(any_of=KEY_VARS),
        default_model=DEFAULT_MODEL,
    )
)
