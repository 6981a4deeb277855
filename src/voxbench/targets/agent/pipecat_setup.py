"""What a ``pipecat/<module:factory>`` bot is built from: the user's factory, loaded from its
``module:factory`` name, and the benchmark's side of the bot (``PipecatBotSetup``: the
instructions, the tools as a Pipecat ``ToolsSchema``, the conversation so far as LLM messages).

Imported by ``voxbench.targets.agent.pipecat``, which first checks Pipecat is installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema

from voxbench.core.errors import ConfigError
from voxbench.core.secrets import redact_text
from voxbench.core.session import HistoryMessage, SessionSetup
from voxbench.targets.realtime.base import tool_result_text

FACTORY_FORM = "pipecat/package.module:factory (a function of (transport, setup))"

BotFactory = Callable[..., Any]
"""``factory(transport, setup)`` → a ``Pipeline``, a ``PipelineWorker``, or a list of
processors (voxbench puts ``transport.input()`` before and ``transport.output()`` after);
it may be ``async``."""


@dataclass(frozen=True)
class PipecatBotSetup:
    """What the factory gets besides the transport: the benchmark's side of the bot."""

    system_prompt: str
    """The benchmark's instructions and knowledge base (a bot may keep its own prompt)."""
    tools: ToolsSchema
    """The benchmark's tools; voxbench answers their calls (put them in the LLM context)."""
    history: list[dict[str, Any]]
    """The conversation so far (a reconnect), as OpenAI-style LLM messages."""
    modality: Literal["text", "audio"]
    """``text``: user turns come as text and the answer is read from the bot's words;
    ``audio``: user turns come as audio and the bot should speak."""
    audio_in_sample_rate: int
    audio_out_sample_rate: int
    turn_detection: Literal["client", "agent"]
    """``client``: voxbench pushes the VAD frames that start and stop each user turn;
    ``agent``: the bot's own VAD decides."""

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The system prompt then the history: the ``LLMContext`` messages to start with."""
        system = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return system + list(self.history)


def load_factory(spec: str) -> BotFactory:
    """The callable named by ``module:factory``, or a ``ConfigError`` saying what is wrong."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            f"{spec!r} names no factory" if spec else "no bot factory",
            field="target",
            expected=FACTORY_FORM,
        )
    # One import rule for user code: the class-path plug-in's (installed, PYTHONPATH, cwd).
    from voxbench.targets.registry import _import_user_module

    try:
        module = _import_user_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module_name.startswith(exc.name):
            raise ConfigError(
                f"cannot import bot module {module_name!r}: no module named {exc.name!r}",
                field="target",
                expected=f"{FACTORY_FORM}, with the module installed, on PYTHONPATH or in "
                "the working directory",
            ) from None
        raise failed(spec, "importing", exc) from exc
    except Exception as exc:
        raise failed(spec, "importing", exc) from exc
    factory = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise ConfigError(
                f"module {module_name!r} has no {attr!r}",
                field="target",
                expected=f"a function defined in {module_name}: {FACTORY_FORM}",
            )
    if not callable(factory):
        raise ConfigError(
            f"{spec!r} is a {type(factory).__name__}, not a function",
            field="target",
            expected=FACTORY_FORM,
        )
    return factory


def failed(spec: str, doing: str, exc: BaseException) -> ConfigError:
    return ConfigError(
        redact_text(f"{doing} Pipecat bot {spec!r} failed: {type(exc).__name__}: {exc}"),
        field="target",
    )


def benchmark_tools(setup: SessionSetup) -> ToolsSchema:
    """The benchmark's tools as Pipecat function schemas."""
    schemas = []
    for tool in setup.tools:
        parameters = tool.parameters or {}
        schemas.append(
            FunctionSchema(
                name=tool.name,
                description=tool.description,
                properties=dict(parameters.get("properties", {})),
                required=list(parameters.get("required", [])),
            )
        )
    return ToolsSchema(standard_tools=schemas)


def history_messages(history: Sequence[HistoryMessage]) -> list[dict[str, Any]]:
    """The conversation so far as OpenAI-style messages (what an ``LLMContext`` holds)."""
    out: list[dict[str, Any]] = []
    for message in history:
        if message.role == "user":
            out.append({"role": "user", "content": message.text})
            continue
        if message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call.call_id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": json.dumps(call.arguments, ensure_ascii=False),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
            for call in message.tool_calls:
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": call.call_id,
                        "content": tool_result_text(call.result),
                    }
                )
        if message.text:
            out.append({"role": "assistant", "content": message.text})
    return out
