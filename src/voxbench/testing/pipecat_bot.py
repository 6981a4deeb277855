"""A Pipecat bot with no external services, for ``pipecat/<module:factory>`` tests.

Built from Pipecat's own processors (``LLMContextAggregatorPair``, the turn strategies,
``LLMService``'s function calling) around three small stand-ins for the services a bot
would call over the network:

- ``ScriptLLM``: an ``LLMService`` that answers from a ``Script`` (the benchmark's oracle
  with ``GoldenScript``): it reads the ``LLMContext`` Pipecat's aggregators keep, streams
  ``LLMTextFrame`` pieces and makes tool calls through ``run_function_calls``, so each call
  goes to the handler registered on the service (voxbench's, in a run). ``ttfb_ms`` holds
  each response's first output back; ``faults`` (``error@N``) raise inside response N.
- ``ScriptSTT``: the bot's "ASR": a final ``TranscriptionFrame`` with the script's
  transcript of the N-th user turn when the user stops speaking (a VAD stop frame: voxbench's,
  or with ``turn_detection=agent`` the bot's own Silero ``VADProcessor``'s).
- ``ToneTTS``: speaks each response as tone bursts (``synth_speech``) in
  ``TTSAudioRawFrame`` chunks, with a ``TTSTextFrame`` per word, before the response's end.

``script_bot(script)`` gives a factory of the form the target takes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

from pipecat.frames.frames import (
    Frame,
    FunctionCallFromLLM,
    LLMContextFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TranscriptionFrame,
    TTSAudioRawFrame,
    TTSStartedFrame,
    TTSStoppedFrame,
    TTSTextFrame,
    VADUserStoppedSpeakingFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.llm_service import LLMService
from pipecat.services.settings import LLMSettings
from pipecat.turns.user_start.vad_user_turn_start_strategy import VADUserTurnStartStrategy
from pipecat.turns.user_stop.speech_timeout_user_turn_stop_strategy import (
    SpeechTimeoutUserTurnStopStrategy,
)
from pipecat.turns.user_turn_strategies import UserTurnStrategies
from pipecat.utils.time import time_now_iso8601

from voxbench.testing.realtime_common import split_chunks, split_words, synth_speech
from voxbench.testing.scripts import FaultPlan, Script, ScriptCall, ScriptMessage, ToolOutcome

_SETTINGS = (
    "system_instruction", "temperature", "max_tokens", "top_p", "top_k", "frequency_penalty",
    "presence_penalty", "seed", "filter_incomplete_user_turns", "user_turn_completion_config",
)  # fmt: skip
"""``LLMSettings`` fields a script has no use for (Pipecat wants each one given)."""


class ScriptLLM(LLMService):
    """An LLM service whose answers come from a ``Script``."""

    def __init__(
        self, script: Script, *, ttfb_ms: float = 0.0, faults: Sequence[str] = (), **kwargs: Any
    ) -> None:
        unset = {f: None for f in _SETTINGS}
        super().__init__(settings=LLMSettings(model="script", **unset), **kwargs)
        self.script = script
        self.ttfb = ttfb_ms / 1000
        self.faults = FaultPlan.parse(faults)
        self.responses = 0
        self.first_output_delays: list[float] = []
        """Seconds from each context frame's arrival to the response's first output."""
        self._calls = 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMContextFrame):
            await self._respond(frame.context)
        else:
            await self.push_frame(frame, direction)

    async def _respond(self, context: LLMContext) -> None:
        t0 = time.perf_counter()
        self.responses += 1
        if any(f.kind == "server_error" for f in self.faults.for_request(self.responses)):
            raise RuntimeError(f"the scripted LLM failed on response {self.responses}")
        reply = self.script.reply(script_conversation(context.get_messages()))
        await asyncio.sleep(max(0.0, t0 + self.ttfb - time.perf_counter()))
        await self.push_frame(LLMFullResponseStartFrame())
        self.first_output_delays.append(time.perf_counter() - t0)
        for piece in split_words(reply.text):
            await self.push_frame(LLMTextFrame(piece))
        if reply.calls:
            calls = []
            for call in reply.calls:
                self._calls += 1
                calls.append(
                    FunctionCallFromLLM(
                        function_name=call.name,
                        tool_call_id=f"call_{self._calls}",
                        arguments=dict(call.arguments),
                        context=context,
                    )
                )
            await self.run_function_calls(calls)
        await self.push_frame(LLMFullResponseEndFrame())


def script_conversation(messages: Sequence[Any]) -> list[ScriptMessage]:
    """OpenAI-style context messages → the provider-neutral conversation a script reads."""
    out: list[ScriptMessage] = []
    names: dict[str, str] = {}
    for message in messages:
        if not isinstance(message, dict):
            continue
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else _text_parts(content)
        if role == "user":
            out.append(ScriptMessage(role="user", text=text))
        elif role == "assistant":
            calls = []
            for call in message.get("tool_calls") or []:
                function = call.get("function", {})
                names[call.get("id", "")] = function.get("name", "")
                arguments = function.get("arguments") or "{}"
                calls.append(ScriptCall(function.get("name", ""), json.loads(arguments)))
            out.append(ScriptMessage(role="assistant", text=text, calls=tuple(calls)))
        elif role == "tool":
            call_id = message.get("tool_call_id", "")
            try:
                result = json.loads(text)
            except json.JSONDecodeError:
                result = text
            outcome = ToolOutcome(call_id=call_id, name=names.get(call_id, ""), result=result)
            if out and out[-1].role == "tool":
                out[-1] = ScriptMessage(role="tool", results=(*out[-1].results, outcome))
            else:
                out.append(ScriptMessage(role="tool", results=(outcome,)))
    return out


def _text_parts(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    return "".join(p.get("text", "") for p in content if isinstance(p, dict))


class ScriptSTT(FrameProcessor):
    """The bot's ASR: the script's transcript of each user turn, when the user stops."""

    def __init__(self, script: Script, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.script = script
        self.turns = 0

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        await self.push_frame(frame, direction)
        if isinstance(frame, VADUserStoppedSpeakingFrame):
            self.turns += 1
            text = self.script.transcribe(self.turns)
            transcript = TranscriptionFrame(text, "user", time_now_iso8601())
            transcript.finalized = True
            await self.push_frame(transcript)


class ToneTTS(FrameProcessor):
    """Speaks each response as tone bursts, one ``TTSTextFrame`` per word."""

    def __init__(self, sample_rate: int, *, chunk_ms: int = 40, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate = sample_rate
        self.chunk_ms = chunk_ms
        self._text: list[str] = []

    async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
        await super().process_frame(frame, direction)
        if isinstance(frame, LLMTextFrame) and direction == FrameDirection.DOWNSTREAM:
            self._text.append(frame.text)
            return
        if isinstance(frame, LLMFullResponseEndFrame) and self._text:
            text, self._text = "".join(self._text).strip(), []
            await self.speak(text)
        await self.push_frame(frame, direction)

    async def speak(self, text: str) -> None:
        words = text.split()
        chunks = split_chunks(synth_speech(text, self.rate), self.rate, self.chunk_ms)
        await self.push_frame(TTSStartedFrame())
        sent = 0
        for i, chunk in enumerate(chunks):
            due = round(len(words) * (i + 1) / len(chunks))
            for word in words[sent:due]:
                await self.push_frame(TTSTextFrame(word, text_type="word"))
            sent = due
            await self.push_frame(TTSAudioRawFrame(chunk, self.rate, 1))
        await self.push_frame(TTSStoppedFrame())


def script_bot(
    script: Script,
    *,
    ttfb_ms: float = 0.0,
    faults: Sequence[str] = (),
    built: list[ScriptLLM] | None = None,
) -> Callable[[Any, Any], Pipeline]:
    """A factory ``(transport, setup) → Pipeline`` of the scripted bot; each LLM it builds
    is appended to ``built`` (one per session: a reconnect builds a new bot)."""
    plan = FaultPlan.parse(faults)

    def factory(transport: Any, setup: Any) -> Pipeline:
        llm = ScriptLLM(script, ttfb_ms=ttfb_ms)
        llm.faults = plan
        if built is not None:
            if built:
                llm.responses = built[-1].responses  # fault numbers count across sessions
            built.append(llm)
        context = LLMContext(setup.messages, tools=setup.tools)
        aggregators = LLMContextAggregatorPair(
            context,
            user_params=LLMUserAggregatorParams(
                user_turn_strategies=UserTurnStrategies(
                    start=[VADUserTurnStartStrategy()],
                    stop=[SpeechTimeoutUserTurnStopStrategy(user_speech_timeout=0.0)],
                )
            ),
        )
        processors: list[FrameProcessor] = [transport.input()]
        if setup.turn_detection == "agent":  # the bot's own VAD hears the turns
            from pipecat.audio.vad.silero import SileroVADAnalyzer
            from pipecat.audio.vad.vad_analyzer import VADParams
            from pipecat.processors.audio.vad_processor import VADProcessor

            vad = SileroVADAnalyzer(params=VADParams(stop_secs=0.8))
            processors.append(VADProcessor(vad_analyzer=vad))
        processors.append(ScriptSTT(script))
        processors += [aggregators.user(), llm]
        if setup.modality == "audio":
            processors.append(ToneTTS(setup.audio_out_sample_rate))
        processors += [transport.output(), aggregators.assistant()]
        return Pipeline(processors)

    return factory
