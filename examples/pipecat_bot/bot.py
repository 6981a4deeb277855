"""A Pipecat bot voxbench can run: ``voxbench run smoke -t pipecat/bot:create_pipeline``.

The one change an existing Pipecat bot needs: the code that builds its pipeline takes the
transport (and what the benchmark sets up) as arguments and returns the pipeline, instead
of also creating its own transport and running it. Your production entry point keeps
calling it with Daily's, LiveKit's or the websocket transport; voxbench calls it with its
own. Everything else — services, context aggregators, turn strategies, your processors —
stays as it is.

Services here: OpenAI for STT, LLM and TTS (``OPENAI_API_KEY``), Silero for VAD. Swap in
yours (Deepgram, Cartesia, ElevenLabs…) as you would in production.
"""

from __future__ import annotations

import os

from pipecat.audio.vad.silero import SileroVADAnalyzer
from pipecat.pipeline.pipeline import Pipeline
from pipecat.processors.aggregators.llm_context import LLMContext
from pipecat.processors.aggregators.llm_response_universal import (
    LLMContextAggregatorPair,
    LLMUserAggregatorParams,
)
from pipecat.services.openai.llm import OpenAILLMService
from pipecat.services.openai.stt import OpenAISTTService
from pipecat.services.openai.tts import OpenAITTSService
from pipecat.transports.base_transport import BaseTransport

MY_PROMPT = "You are the front desk of a conference. Be brief and friendly."


def create_pipeline(transport: BaseTransport, setup=None) -> Pipeline:
    """Build the bot around ``transport``.

    ``setup`` is voxbench's ``PipecatBotSetup`` in a benchmark run (None in production):
    ``setup.messages`` (the benchmark's instructions, then the conversation so far),
    ``setup.tools`` (the benchmark's tools as a ``ToolsSchema``; voxbench answers their
    calls), ``setup.modality``. A bot that keeps its own prompt and tools may ignore it and
    serve the benchmark's tools with ``voxbench tools serve`` instead.
    """
    key = os.environ.get("OPENAI_API_KEY")
    llm = OpenAILLMService(api_key=key, settings=OpenAILLMService.Settings(model="gpt-4.1-mini"))
    speaks = setup is None or setup.modality == "audio"  # a text run needs no STT or TTS

    if setup is not None:
        context = LLMContext(setup.messages, tools=setup.tools)
    else:
        context = LLMContext([{"role": "system", "content": MY_PROMPT}])
        # llm.register_function("my_tool", my_handler)  # production tools, as before
    # With voxbench's default turn detection (client) voxbench plays the VAD; with
    # `-o turn_detection=agent` (and in production) the bot's own VAD hears the turns.
    own_vad = setup is None or setup.turn_detection == "agent"
    aggregators = LLMContextAggregatorPair(
        context,
        user_params=LLMUserAggregatorParams(vad_analyzer=SileroVADAnalyzer() if own_vad else None),
    )
    processors = [transport.input()]
    if speaks:
        processors.append(OpenAISTTService(api_key=key))
    processors += [aggregators.user(), llm]
    if speaks:
        processors.append(
            OpenAITTSService(api_key=key, settings=OpenAITTSService.Settings(voice="alloy"))
        )
    processors += [transport.output(), aggregators.assistant()]
    return Pipeline(processors)
