"""What each Claude model accepts in a Messages request: sampling, thinking, tool choice.

One table for every place that sends a Claude request — the Anthropic and Bedrock judges
(``providers.anthropic``, ``providers.bedrock``) and targets (``targets.anthropic``,
``targets.bedrock``) — so that a request carries only what its model takes. A model id is
read by family and version (``claude-opus-4-7``, ``claude-3-7-sonnet-20250219``, Bedrock's
``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` or an inference-profile ARN); a new
version inherits the rules of its place in the order, so a Claude 5.x id is covered on
the day it ships. An id that names no Claude model is ``None``: nothing is checked and the
caller keeps its old behaviour (the API decides).

Sources (as published 2025–2026; API version ``2023-06-01``, the one voxbench sends):

- Sampling: "Migrating to Claude Opus 4.7" in the migration guide
  (https://platform.claude.com/docs/en/about-claude/models/migration-guide): ``temperature``,
  ``top_p`` and ``top_k`` are refused with a 400 ("`temperature` is deprecated for this
  model.") from Opus 4.7 on; public reports show the same for Opus 4.8, Fable 5 and the
  Bedrock ids (github.com/UKGovernmentBEIS/inspect_ai/issues/3721,
  github.com/The-PR-Agent/pr-agent/issues/2456,
  github.com/DayuanJiang/next-ai-draw-io/issues/861). The always-refusing list in the
  thinking docs' "Sampling parameters" section: Opus 4.7, 4.8, 5, 5.5; Sonnet 5, 5.5;
  Haiku 5.5; every Fable and Mythos model. The Claude 4.5 migration notes: from 4.5 on,
  ``temperature`` and ``top_p`` may not both be set ("cannot both be specified for this
  model", github.com/skydiscover-ai/skydiscover/issues/15 on Sonnet 4.6).
- Thinking modes: the per-model table of "Configuring thinking"
  (https://platform.claude.com/docs/en/build-with-claude/thinking#configuring-thinking) and
  "Extended thinking" (https://platform.claude.com/docs/en/build-with-claude/extended-thinking):
  budget thinking (``type: enabled``) from Claude 3.7 Sonnet to the 4.6 models; adaptive
  thinking from the 4.6 models on; from 4.7 on adaptive only (``enabled`` is a 400); Claude
  Mythos Preview thinks always (``disabled`` is a 400). ``budget_tokens`` is at least 1,024
  and below ``max_tokens`` (also the SDK's ``ThinkingConfigEnabledParam`` docstring).
- Thinking with other fields ("Feature compatibility" in Extended thinking): not with
  ``temperature`` (other than its default, 1) or ``top_k``; ``top_p`` only between 0.95 and 1; ``tool_choice`` only
  ``auto`` or ``none`` (``any`` and ``tool`` force a tool and are a 400).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from voxbench.core.errors import ConfigError

MIN_THINKING_BUDGET = 1024
THINKING_TOP_P = (0.95, 1.0)
"""The ``top_p`` range allowed while thinking."""
FORCED_TOOL_CHOICES = ("any", "tool")
FAMILIES = ("opus", "sonnet", "haiku", "fable", "mythos")
SAMPLING_FIELDS = ("temperature", "top_p", "top_k")


@dataclass(frozen=True)
class ClaudeModel:
    """What one Claude model accepts."""

    family: str
    version: tuple[int, int] | None
    """(major, minor); None for an unversioned name (``claude-mythos-preview``)."""
    sampling: bool
    """``temperature`` / ``top_p`` / ``top_k`` accepted (at any value)."""
    one_of_temperature_top_p: bool
    """``temperature`` and ``top_p`` may not both be set."""
    thinking: frozenset[str]
    """The ``thinking.type`` values accepted; ``disabled`` also stands for no ``thinking``."""

    @property
    def thinks_always(self) -> bool:
        """Thinking cannot be turned off: a forced tool choice is refused on every request."""
        return "disabled" not in self.thinking


_ID = re.compile(r"claude-([a-z0-9.:-]+)")


def claude_model(model_id: str) -> ClaudeModel | None:
    """The capabilities of ``model_id``, or None when it names no Claude model."""
    match = _ID.search(model_id.lower())
    if match is None:
        return None
    family: str | None = None
    numbers: list[int] = []
    for token in re.split(r"[-.]", match.group(1)):  # OpenRouter spells 4.7 with a dot
        if token in FAMILIES and family is None:
            family = token
        elif token.isdigit() and len(token) <= 2 and len(numbers) < 2:
            numbers.append(int(token))
        elif family is not None and numbers:
            break  # a date or a Bedrock suffix (``20250929``, ``v1:0``) ends the version
    if family is None:
        return None
    version = (numbers[0], numbers[1] if len(numbers) > 1 else 0) if numbers else None
    return _rules(family, version)


def _rules(family: str, version: tuple[int, int] | None) -> ClaudeModel:
    adaptive_generation = family in ("fable", "mythos") or (version or (0, 0)) >= (4, 7)
    if adaptive_generation:
        modes = {"adaptive"} if family == "mythos" and version is None else {"adaptive", "disabled"}
    elif version is None or version < (3, 7) or (family == "haiku" and version < (4, 5)):
        modes = {"disabled"}  # no thinking at all
    elif version >= (4, 6):
        modes = {"enabled", "adaptive", "disabled"}
    else:
        modes = {"enabled", "disabled"}
    return ClaudeModel(
        family=family,
        version=version,
        sampling=not adaptive_generation,
        one_of_temperature_top_p=version is not None and version >= (4, 5),
        thinking=frozenset(modes),
    )


@dataclass(frozen=True)
class Refusal:
    """A field the model refuses, as the API would answer it."""

    field: str
    """The request field (Messages API names: ``temperature``, ``thinking.budget_tokens``)."""
    message: str


def refusals(model_id: str, request: dict[str, Any]) -> list[Refusal]:
    """What the API refuses in ``request`` for ``model_id``, before it is sent.

    ``request`` holds Messages API fields: ``max_tokens``, ``temperature``, ``top_p``,
    ``top_k``, ``thinking``, ``tool_choice`` (any may be absent). Also what the Bedrock
    Converse request of a Claude model carries once its names are mapped.
    """
    model = claude_model(model_id)
    if model is None:
        return []
    out: list[Refusal] = []
    sent = [f for f in SAMPLING_FIELDS if request.get(f) is not None]
    if sent and not model.sampling:
        out += [Refusal(f, f"`{f}` is deprecated for this model ({model_id})") for f in sent]
    elif model.one_of_temperature_top_p and {"temperature", "top_p"} <= set(sent):
        out.append(
            Refusal("top_p", "`temperature` and `top_p` cannot both be specified for this model")
        )
    thinking = request.get("thinking")
    kind = thinking.get("type") if isinstance(thinking, dict) else None
    if kind is not None and kind not in model.thinking:
        accepted = " or ".join(sorted(model.thinking - {"disabled"})) or "none"
        out.append(
            Refusal(
                "thinking.type",
                f"thinking type {kind!r} is not supported by {model_id} (it takes: {accepted})",
            )
        )
    thinks = kind in ("enabled", "adaptive") or (kind is None and model.thinks_always)
    if kind == "enabled":
        out += _budget_refusals(thinking or {}, request.get("max_tokens"))
    if thinks:
        out += _thinking_conflicts(request)
    return out


def _budget_refusals(thinking: dict[str, Any], max_tokens: Any) -> list[Refusal]:
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int):
        return [Refusal("thinking.budget_tokens", "thinking.budget_tokens: Field required")]
    if budget < MIN_THINKING_BUDGET:
        return [
            Refusal(
                "thinking.budget_tokens",
                f"thinking.budget_tokens: Input should be greater than or equal to "
                f"{MIN_THINKING_BUDGET} (got {budget})",
            )
        ]
    if isinstance(max_tokens, int) and budget >= max_tokens:
        return [
            Refusal(
                "max_tokens",
                f"`max_tokens` ({max_tokens}) must be greater than thinking.budget_tokens "
                f"({budget})",
            )
        ]
    return []


def _thinking_conflicts(request: dict[str, Any]) -> list[Refusal]:
    out: list[Refusal] = []
    if request.get("temperature") not in (None, 1):
        out.append(Refusal("temperature", "`temperature` may only be 1 while thinking is enabled"))
    if request.get("top_k") is not None:
        out.append(Refusal("top_k", "`top_k` may not be set while thinking is enabled"))
    top_p = request.get("top_p")
    low, high = THINKING_TOP_P
    if isinstance(top_p, int | float) and not low <= top_p <= high:
        out.append(
            Refusal("top_p", f"`top_p` must be between {low} and {high} while thinking is enabled")
        )
    choice = request.get("tool_choice")
    kind = choice.get("type") if isinstance(choice, dict) else choice
    if kind in FORCED_TOOL_CHOICES:
        out.append(
            Refusal(
                "tool_choice",
                f"Thinking may not be enabled when tool_choice forces tool use "
                f"(type {kind!r}; use 'auto' or 'none')",
            )
        )
    return out


def check_options(target: str, model_id: str, options: dict[str, Any]) -> None:
    """Refuse target options the model refuses, before the first turn (``ConfigError``).

    ``options`` are the target's (``-o KEY=VALUE``), named as the Messages API fields.
    """
    found = refusals(model_id, options)
    if found:
        raise ConfigError(
            f"{target} refuses {'; '.join(r.message for r in found)}",
            field=f"target_options.{found[0].field}",
            expected="options the model takes (voxbench.providers.claude_models)",
        )


def accepts_sampling(model_id: str) -> bool:
    """Whether a request to ``model_id`` may carry ``temperature`` (an unknown id may)."""
    model = claude_model(model_id)
    return model is None or model.sampling


def thinks_always(model_id: str) -> bool:
    """Whether ``model_id`` thinks on every request (a forced tool choice is refused)."""
    model = claude_model(model_id)
    return model is not None and model.thinks_always
