"""The one ``provider/model`` parser."""

from __future__ import annotations

import pytest

from voxbench.core.errors import ConfigError
from voxbench.core.names import ComponentName, parse_component_name


@pytest.mark.parametrize(
    ("text", "provider", "model"),
    [
        ("openai/gpt-4o-mini", "openai", "gpt-4o-mini"),
        ("openai:gpt-4o-mini", "openai", "gpt-4o-mini"),
        (
            "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0",
            "bedrock",
            "anthropic.claude-3-5-haiku-20241022-v1:0",
        ),
        ("ollama/llama3.2:3b", "ollama", "llama3.2:3b"),
        ("ollama:llama3.2:3b", "ollama", "llama3.2:3b"),
        (
            "openrouter/meta-llama/llama-3.1-8b-instruct",
            "openrouter",
            "meta-llama/llama-3.1-8b-instruct",
        ),
        (
            "openai-compatible:meta-llama/Llama-3.1-8B",
            "openai-compatible",
            "meta-llama/Llama-3.1-8B",
        ),
        ("cascade/local/baseline", "cascade", "local/baseline"),
        ("local/whisper-tiny.en", "local", "whisper-tiny.en"),
        ("  anthropic/claude-sonnet-4-5 ", "anthropic", "claude-sonnet-4-5"),
    ],
)
def test_names_split_at_the_first_separator(text: str, provider: str, model: str) -> None:
    parsed = parse_component_name(text)
    assert parsed == ComponentName(provider, model)
    assert str(parsed) == f"{provider}/{model}"


@pytest.mark.parametrize(
    "text", ["", "openai", "openai/", "/gpt-4o", ":x", "pkg.mod:Class", "a b/c"]
)
def test_bad_names_are_config_errors_naming_the_field(text: str) -> None:
    with pytest.raises(ConfigError, match="judge") as info:
        parse_component_name(text, field="judge")
    assert info.value.field == "judge" and "provider/model" in str(info.value)


def test_a_bare_provider_is_accepted_where_asked() -> None:
    assert parse_component_name("openai", allow_bare=True) == ComponentName("openai", "")
    with pytest.raises(ConfigError):
        parse_component_name("openai/", allow_bare=True)
