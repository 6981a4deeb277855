"""AWS Bedrock Converse (``ConverseStream``, tool use) as a Session: ``bedrock/<model id>``.

An optional extra (``pip install 'voxbench[bedrock]'``): botocore signs the requests
(SigV4) and decodes the binary event stream, so it is imported only when a Bedrock
session starts. Protocol (Amazon Bedrock API Reference, ``ConverseStream`` and
``ConverseStreamOutput``, as published 2025–2026): the request carries ``messages``
(``content`` blocks ``text`` / ``toolUse {toolUseId, name, input}`` /
``toolResult {toolUseId, content: [{json}], status}``), ``system`` and ``toolConfig.tools
[{toolSpec: {name, description, inputSchema: {json}}}]``; the stream yields
``messageStart``, ``contentBlockStart`` (``start.toolUse``), ``contentBlockDelta``
(``delta.text`` or ``delta.toolUse.input`` JSON fragments), ``contentBlockStop``,
``messageStop {stopReason}`` and ``metadata {usage}``; failures arrive as exceptions
(``throttlingException``, ``internalServerException``, ``modelStreamErrorException``, …).
``toolResult.status`` is sent only to the families the API reference says accept it
(Anthropic Claude and Amazon Nova); others answer it with a ValidationException.
botocore is synchronous: its stream is read on a thread and handed to the event loop.
The system prompt is followed by a ``cachePoint`` for the families Bedrock caches
(``providers.bedrock.takes_cache_point``); a turn's input tokens are ``inputTokens`` plus
``cacheReadInputTokens`` and ``cacheWriteInputTokens`` (Bedrock counts them apart). A Claude
model's ``temperature`` / ``top_p`` options are checked against what it takes
(``providers.claude_models``) when the session is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from voxbench.core.errors import PrerequisiteError
from voxbench.core.events import AssistantTextDelta, TargetError, ToolCallRequested, Usage
from voxbench.core.session import Session, SessionSetup
from voxbench.providers.bedrock import (
    CACHE_POINT,
    KEY_VARS,
    classify_bedrock_error,
    make_bedrock_client,
    takes_cache_point,
)
from voxbench.providers.claude_models import check_options
from voxbench.providers.http import target_error
from voxbench.targets import stop_reasons
from voxbench.targets.chat_session import ChatSession, Emit, StepFailed, StepResult
from voxbench.targets.registry import TargetContext, TargetProvider, register_provider
from voxbench.targets.text_history import ChatMessage, parse_arguments, result_object, safe_call_id

_DONE = object()


@dataclass
class _Block:
    tool_id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    is_tool: bool = False


class BedrockSession(ChatSession):
    """A Session over Bedrock ``ConverseStream``."""

    provider = "bedrock"
    stop_reasons = stop_reasons.BEDROCK
    key_vars = KEY_VARS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._bedrock: Any = None
        self._streams: set[Any] = set()

    async def start(self, setup: SessionSetup) -> None:
        await super().start(setup)
        self._bedrock = make_bedrock_client(
            purpose=self.info.name, base_url=self.base_url or None, options=self.options
        )

    def resolve_key(self) -> str | None:
        return None  # botocore resolves credentials (env, profile, role) in start()

    def request(self) -> dict[str, Any]:
        """The ``ConverseStream`` arguments for the conversation so far."""
        assert self.setup is not None
        request: dict[str, Any] = {
            "modelId": self.model,
            "messages": render_messages(
                self.conversation, result_status=takes_tool_result_status(self.model)
            ),
            "system": [{"text": self.setup.system_prompt}],
        }
        if takes_cache_point(self.model):
            request["system"].append(CACHE_POINT)
        if self.setup.tools:
            request["toolConfig"] = {
                "tools": [
                    {
                        "toolSpec": {
                            "name": t.name,
                            "description": t.description,
                            "inputSchema": {"json": t.parameters},
                        }
                    }
                    for t in self.setup.tools
                ]
            }
        inference = {
            wire: self.options[key]
            for key, wire in (
                ("max_tokens", "maxTokens"),
                ("temperature", "temperature"),
                ("top_p", "topP"),
            )
            if key in self.options
        }
        if inference:
            request["inferenceConfig"] = inference
        return request

    async def request_step(self, emit: Emit) -> StepResult:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        request = self.request()

        def read() -> None:
            # A daemon thread, not the loop's executor: a hung read must not hold up exit.
            def put(item: Any) -> None:
                with contextlib.suppress(RuntimeError):  # the loop closed: nobody listens
                    loop.call_soon_threadsafe(queue.put_nowait, item)

            stream = None
            try:
                stream = self._bedrock.converse_stream(**request)["stream"]
                self._streams.add(stream)
                for event in stream:
                    put(event)
                put(_DONE)
            except Exception as exc:  # handed to the loop, classified there
                put(exc)
            finally:
                if stream is not None:
                    self._streams.discard(stream)
                    stream.close()

        threading.Thread(target=read, name=f"bedrock-{self.model}", daemon=True).start()
        return await self._consume(queue, emit)

    async def _consume(self, queue: asyncio.Queue[Any], emit: Emit) -> StepResult:
        blocks: dict[int, _Block] = {}
        text: list[str] = []
        stop_reason: str | None = None
        stopped = usage_sent = False
        while True:
            item = await queue.get()
            if item is _DONE:
                break
            if isinstance(item, Exception):
                raise StepFailed(classify(item))
            if stopped and "metadata" not in item:
                continue  # a repeated event after messageStop
            if "contentBlockStart" in item:
                event = item["contentBlockStart"]
                index = event.get("contentBlockIndex", len(blocks))
                tool = (event.get("start") or {}).get("toolUse")
                if index not in blocks and tool:
                    blocks[index] = _Block(tool["toolUseId"], tool["name"], is_tool=True)
            elif "contentBlockDelta" in item:
                event = item["contentBlockDelta"]
                block = blocks.setdefault(event.get("contentBlockIndex", 0), _Block())
                delta = event.get("delta") or {}
                if delta.get("text"):
                    text.append(delta["text"])
                    emit(AssistantTextDelta(text=delta["text"]))
                elif "toolUse" in delta:
                    block.parts.append(delta["toolUse"].get("input", ""))
            elif "messageStop" in item:
                stop_reason = item["messageStop"].get("stopReason")
                stopped = True
            elif "metadata" in item and not usage_sent:
                usage = item["metadata"].get("usage") or {}
                read = int(usage.get("cacheReadInputTokens") or 0)
                emit(
                    Usage(
                        input_tokens=int(usage.get("inputTokens") or 0)
                        + read
                        + int(usage.get("cacheWriteInputTokens") or 0),
                        output_tokens=int(usage.get("outputTokens") or 0),
                        cached_input_tokens=read,
                    )
                )
                usage_sent = True  # a repeated metadata event is not counted twice
        if not stopped:
            raise self.protocol_error("the stream ended before messageStop")
        calls = []
        for _, block in sorted(blocks.items()):
            if not block.is_tool:
                continue
            raw = "".join(block.parts)
            arguments, error = parse_arguments(raw)
            calls.append(
                ToolCallRequested(
                    call_id=block.tool_id,
                    name=block.name,
                    arguments=arguments,
                    raw_arguments=raw if error else None,
                    parse_error=error,
                )
            )
        return StepResult(text="".join(text), calls=calls, stop_reason=stop_reason)

    async def close(self) -> None:
        for stream in list(self._streams):
            with contextlib.suppress(Exception):  # closing a dead stream may fail
                stream.close()  # unblocks the reading thread
        await super().close()
        if self._bedrock is not None:
            self._bedrock.close()
            self._bedrock = None


def classify(exc: Exception) -> TargetError:
    """A botocore failure as a ``TargetError`` (same taxonomy as the HTTP adapters)."""
    return target_error(classify_bedrock_error(exc))


TOOL_RESULT_STATUS_FAMILIES = ("anthropic.claude", "amazon.nova")
"""Model families whose Converse ``toolResult`` takes ``status`` (ToolResultBlock reference)."""


def takes_tool_result_status(model_id: str) -> bool:
    """Whether ``model_id`` (a model, an inference profile or an ARN) accepts the field."""
    return any(family in model_id.lower() for family in TOOL_RESULT_STATUS_FAMILIES)


def render_messages(
    conversation: list[ChatMessage], *, result_status: bool = True
) -> list[dict[str, Any]]:
    """The conversation as Converse ``messages`` (alternating roles, consecutive merged)."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in conversation:
        if message.role == "user":
            add("user", [{"text": message.text}] if message.text else [])
            continue
        blocks: list[dict[str, Any]] = [{"text": message.text}] if message.text else []
        blocks += [
            {
                "toolUse": {
                    "toolUseId": safe_call_id(c.call_id),
                    "name": c.name,
                    "input": c.arguments,
                }
            }
            for c in message.calls
        ]
        add("assistant", blocks)
        add(
            "user",
            [
                {"toolResult": _tool_result(c.call_id, c.result, result_status)}
                for c in message.calls
            ],
        )
    return out


def _tool_result(call_id: str, result: Any, with_status: bool) -> dict[str, Any]:
    block: dict[str, Any] = {
        "toolUseId": safe_call_id(call_id),
        "content": [{"json": result_object(result)}],
    }
    if with_status:
        block["status"] = "error" if _is_error(result) else "success"
    return block


def _is_error(result: Any) -> bool:
    return isinstance(result, dict) and result.get("status") == "error"


def _bedrock(context: TargetContext) -> Session:
    if not context.model:
        raise PrerequisiteError("bedrock needs a model id: bedrock/<model id>")
    base_url = context.base_url or os.environ.get("BEDROCK_BASE_URL") or ""
    sampling: dict[str, Any] = {
        k: context.options[k] for k in ("temperature", "top_p") if k in context.options
    }
    check_options(f"bedrock/{context.model}", context.model, sampling)
    return BedrockSession(
        context.model,
        base_url=base_url,
        options=context.options,
        target_name=f"bedrock/{context.model}",
    )


register_provider(
    TargetProvider(
        name="bedrock",
        factory=_bedrock,
        description="AWS Bedrock Converse (streaming, tools); needs the bedrock extra (boto3)",
        kind="text",
        env_vars=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"),
    )
)
