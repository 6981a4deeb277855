"""Registers the realtime providers. Adapters are imported when a provider is chosen."""

from __future__ import annotations

from voxbench.core.session import Session
from voxbench.providers.registry import EnvVars
from voxbench.targets.registry import TargetContext, TargetProvider, register_provider


def _openai(context: TargetContext) -> Session:
    from voxbench.targets.realtime.openai.session import OpenAIRealtimeSession

    return OpenAIRealtimeSession(context.model, base_url=context.base_url, options=context.options)


def _azure(context: TargetContext) -> Session:
    from voxbench.targets.realtime.openai.variants import AzureOpenAIRealtimeSession

    return AzureOpenAIRealtimeSession(
        context.model, base_url=context.base_url, options=context.options
    )


def _xai(context: TargetContext) -> Session:
    from voxbench.targets.realtime.openai.variants import XaiRealtimeSession

    return XaiRealtimeSession(context.model, base_url=context.base_url, options=context.options)


def _gemini(context: TargetContext) -> Session:
    from voxbench.targets.realtime.gemini.session import GeminiLiveSession

    return GeminiLiveSession(context.model, base_url=context.base_url, options=context.options)


def _ultravox(context: TargetContext) -> Session:
    from voxbench.targets.realtime.ultravox.session import UltravoxSession

    return UltravoxSession(context.model, base_url=context.base_url, options=context.options)


def _nova_sonic(context: TargetContext) -> Session:
    from voxbench.targets.realtime.nova_sonic.session import NovaSonicSession

    return NovaSonicSession(context.model, base_url=context.base_url, options=context.options)


_PROVIDERS = (
    TargetProvider(
        name="openai-realtime",
        factory=_openai,
        description="OpenAI Realtime API (speech-to-speech over a websocket)",
        kind="realtime",
        env_vars=("OPENAI_API_KEY",),
        default_model="gpt-realtime",
        models=("gpt-realtime", "gpt-realtime-mini"),
    ),
    TargetProvider(
        name="azure-openai-realtime",
        factory=_azure,
        description="Azure OpenAI realtime deployment (model = deployment name)",
        kind="realtime",
        env_vars=("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT"),
        env=EnvVars(all_of=("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT")),
        default_model="gpt-realtime",
        models=("gpt-realtime", "gpt-realtime-mini"),
    ),
    TargetProvider(
        name="xai-realtime",
        factory=_xai,
        description="xAI Grok voice agent (OpenAI-Realtime-compatible websocket)",
        kind="realtime",
        env_vars=("XAI_API_KEY",),
        default_model="grok-voice-think-fast-1.0",
        models=("grok-voice-think-fast-1.0",),
    ),
    TargetProvider(
        name="gemini-live",
        factory=_gemini,
        description="Gemini Live API (BidiGenerateContent websocket)",
        kind="realtime",
        env_vars=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        env=EnvVars(any_of=("GEMINI_API_KEY", "GOOGLE_API_KEY")),
        default_model="gemini-3.1-flash-live-preview",
        models=("gemini-3.1-flash-live-preview", "gemini-2.5-flash-native-audio-preview-12-2025"),
    ),
    TargetProvider(
        name="ultravox",
        factory=_ultravox,
        description="Ultravox realtime calls (REST call creation, then a websocket)",
        kind="realtime",
        env_vars=("ULTRAVOX_API_KEY",),
        default_model="ultravox-v0.7",
        models=("ultravox-v0.7",),
    ),
    TargetProvider(
        name="nova-sonic",
        factory=_nova_sonic,
        description="Amazon Nova Sonic on Bedrock (bidirectional HTTP/2 event stream); "
        "needs the nova-sonic extra",
        kind="realtime",
        env_vars=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        default_model="amazon.nova-2-sonic-v1:0",
        models=("amazon.nova-2-sonic-v1:0", "amazon.nova-sonic-v1:0"),
        options=frozenset(
            {
                *("pipeline", "voice", "region", "connect_timeout", "output_sample_rate"),
                *("temperature", "top_p", "max_tokens", "renew_after", "endpointing_sensitivity"),
            }
        ),
    ),
)

for _provider in _PROVIDERS:
    register_provider(_provider)
