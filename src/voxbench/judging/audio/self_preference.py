"""Self-preference: a judge rating audio made by its own model family.

LLM judges favour their own family's outputs (Panickssery et al. 2024, "LLM Evaluators
Recognize and Favor Their Own Generations"); an audio judge hearing a voice agent built on
the same family is the same risk. ``family`` reads the family from the model part of
``provider/model`` (a deployment name that says nothing — an Azure deployment called
``prod`` — has none, and no warning is given); ``self_preference_warning`` says when the
judge and the target share one.
"""

from __future__ import annotations

import re

FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("OpenAI GPT", ("gpt", "chatgpt", "o1", "o3", "o4")),
    ("Google Gemini", ("gemini", "gemma")),
    ("Anthropic Claude", ("claude",)),
    ("Qwen", ("qwen",)),
    ("Llama", ("llama",)),
    ("Mistral", ("mistral", "mixtral", "voxtral", "ministral")),
    ("Grok", ("grok",)),
    ("Ultravox", ("ultravox",)),
    ("Phi", ("phi",)),
    ("Nova", ("nova",)),
)


def family(name: str) -> str | None:
    """The model family of ``provider/model`` (None when the name does not say)."""
    model = name.split("/", 1)[-1].lower()
    for segment in reversed(model.split("/")):  # org/model ids: the model part says it
        head = re.split(r"[^a-z0-9]", segment, maxsplit=1)[0]
        for label, prefixes in FAMILIES:
            if any(head == p or re.fullmatch(rf"{p}\d[\w.]*", head) for p in prefixes):
                return label
    return None


def self_preference_warning(judge: str, target: str) -> str | None:
    """A warning when ``judge`` and ``target`` are of one model family, else None."""
    shared = family(judge)
    if shared is None or shared != family(target):
        return None
    return (
        f"self-preference: the judge ({judge}) and the target ({target}) are both "
        f"{shared} models; a judge tends to favour its own family — judge with another"
    )
