"""The ground floor: domain model, the run directory and its timeline, clock, errors and
secrets. Imports nothing of voxbench outside ``core``.

The names below are loaded on first use (PEP 562): importing ``voxbench.core.errors`` (every
command does) no longer builds every pydantic model of the domain first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from voxbench.core.benchmark import (
        CORE_DIMENSIONS,
        ArgMatcher,
        Benchmark,
        DimensionRules,
        Expectation,
        ExpectedCall,
        FactPattern,
        ToolSpec,
        Turn,
    )
    from voxbench.core.clock import Clock, VirtualClock
    from voxbench.core.errors import (
        AudioError,
        BenchmarkError,
        ConfigError,
        PrerequisiteError,
        ProtocolError,
        ProviderError,
        RunError,
        VoxbenchError,
    )
    from voxbench.core.events import (
        AssistantAudio,
        AssistantTextDelta,
        Interrupted,
        SessionEvent,
        SpeechStarted,
        SpeechStopped,
        StageMark,
        TargetError,
        ToolCallRequested,
        TurnComplete,
        Usage,
        UserTranscript,
    )
    from voxbench.core.records import (
        ComponentSpec,
        DimensionScore,
        Judgment,
        RunInfo,
        Scorecard,
        ToolCallRecord,
        TurnRecord,
        TurnTimings,
    )
    from voxbench.core.session import (
        HistoryMessage,
        HistoryToolCall,
        Session,
        SessionSetup,
        TargetInfo,
    )

_HOMES = {
    "ArgMatcher": "voxbench.core.benchmark",
    "AssistantAudio": "voxbench.core.events",
    "AssistantTextDelta": "voxbench.core.events",
    "AudioError": "voxbench.core.errors",
    "Benchmark": "voxbench.core.benchmark",
    "BenchmarkError": "voxbench.core.errors",
    "CORE_DIMENSIONS": "voxbench.core.benchmark",
    "Clock": "voxbench.core.clock",
    "ComponentSpec": "voxbench.core.records",
    "ConfigError": "voxbench.core.errors",
    "DimensionRules": "voxbench.core.benchmark",
    "DimensionScore": "voxbench.core.records",
    "Expectation": "voxbench.core.benchmark",
    "ExpectedCall": "voxbench.core.benchmark",
    "FactPattern": "voxbench.core.benchmark",
    "HistoryMessage": "voxbench.core.session",
    "HistoryToolCall": "voxbench.core.session",
    "Interrupted": "voxbench.core.events",
    "Judgment": "voxbench.core.records",
    "PrerequisiteError": "voxbench.core.errors",
    "ProtocolError": "voxbench.core.errors",
    "ProviderError": "voxbench.core.errors",
    "RunError": "voxbench.core.errors",
    "RunInfo": "voxbench.core.records",
    "Scorecard": "voxbench.core.records",
    "Session": "voxbench.core.session",
    "SessionEvent": "voxbench.core.events",
    "SessionSetup": "voxbench.core.session",
    "SpeechStarted": "voxbench.core.events",
    "SpeechStopped": "voxbench.core.events",
    "StageMark": "voxbench.core.events",
    "TargetError": "voxbench.core.events",
    "TargetInfo": "voxbench.core.session",
    "ToolCallRecord": "voxbench.core.records",
    "ToolCallRequested": "voxbench.core.events",
    "ToolSpec": "voxbench.core.benchmark",
    "Turn": "voxbench.core.benchmark",
    "TurnComplete": "voxbench.core.events",
    "TurnRecord": "voxbench.core.records",
    "TurnTimings": "voxbench.core.records",
    "Usage": "voxbench.core.events",
    "UserTranscript": "voxbench.core.events",
    "VirtualClock": "voxbench.core.clock",
    "VoxbenchError": "voxbench.core.errors",
}
"""Each name ``voxbench.core`` exports → the module that defines it."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


__all__ = [
    "CORE_DIMENSIONS",
    "ArgMatcher",
    "AssistantAudio",
    "AssistantTextDelta",
    "AudioError",
    "Benchmark",
    "BenchmarkError",
    "Clock",
    "ComponentSpec",
    "ConfigError",
    "DimensionRules",
    "DimensionScore",
    "ExpectedCall",
    "Expectation",
    "FactPattern",
    "HistoryMessage",
    "HistoryToolCall",
    "Interrupted",
    "Judgment",
    "PrerequisiteError",
    "ProtocolError",
    "ProviderError",
    "RunError",
    "RunInfo",
    "Scorecard",
    "Session",
    "SessionEvent",
    "SessionSetup",
    "SpeechStarted",
    "SpeechStopped",
    "StageMark",
    "TargetError",
    "TargetInfo",
    "ToolCallRecord",
    "ToolCallRequested",
    "ToolSpec",
    "Turn",
    "TurnComplete",
    "TurnRecord",
    "TurnTimings",
    "Usage",
    "UserTranscript",
    "VirtualClock",
    "VoxbenchError",
]
