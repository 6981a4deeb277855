"""The baseline: a classic assistant with no language model, the floor of every leaderboard.

It answers with the knowledge-base passage that BM25 ranks best for the user's words, and
calls a tool only when the words name the tool's action and it can fill every required
argument with confidence: ids and enum values it finds in the text, the attendee's name
from an earlier "I'm …" / "my name is …", free-text arguments from the utterance itself.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from voxbench.core.benchmark import Benchmark, ToolSpec
from voxbench.core.session import SessionSetup
from voxbench.targets.inprocess import InProcessSession

_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "by",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "i",
        "you",
        "me",
        "my",
        "we",
        "our",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "can",
        "could",
        "would",
        "should",
        "will",
        "please",
        "also",
        "so",
        "do",
        "does",
        "did",
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "how",
        "just",
        "too",
        "as",
        "about",
        "into",
        "than",
        "then",
        "there",
        "their",
        "they",
        "them",
        "he",
        "she",
        "his",
        "her",
        "your",
        "yours",
        "have",
        "has",
        "had",
        "not",
        "no",
        "yes",
        "okay",
        "ok",
        "hi",
        "hello",
    ]
)
_ID = re.compile(r"\b([A-Z]{1,4}-?\d{2,6}|\d{5,7})\b")
_NAME = re.compile(
    r"\b(?i:i'm|i am|my name is|this is|name's)\s+([A-Z][a-z'\-]+(?:\s+[A-Z][a-z'\-]+){1,2})"
)
_ACTION_WORDS: dict[str, tuple[str, ...]] = {
    "register": ("register", "sign me up", "sign up", "book me", "enroll", "reserve"),
    "cancel": ("cancel", "withdraw", "drop my", "remove my", "undo"),
    "end": ("bye", "goodbye", "that's all", "that is all", "hang up"),
    "vote": ("vote", "upvote"),
    "schedule": ("add to my schedule", "add it to my schedule", "put it on my schedule"),
    "conflict": ("conflict", "overlap", "clash"),
    "dietary": (
        "vegetarian",
        "vegan",
        "gluten",
        "halal",
        "kosher",
        "allergy",
        "allergic",
        "dietary",
    ),
    "support": (
        "can't log in",
        "cannot log in",
        "doesn't work",
        "does not work",
        "broken",
        "crash",
        "wifi",
        "wi-fi",
        "support",
    ),
    "suggest": ("suggest", "suggestion", "propose"),
}


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens without stopwords, lightly stemmed."""
    words = re.findall(r"[a-z0-9][a-z0-9\-']*", text.lower())
    return [_stem(w) for w in words if w not in _STOPWORDS]


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@dataclass
class Passage:
    """A retrievable piece of the knowledge base, with its section heading."""

    heading: str
    text: str


def split_passages(markdown: str) -> list[Passage]:
    """Split a markdown knowledge base into line-sized passages under their headings."""
    passages: list[Passage] = []
    heading = ""
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            passages.append(Passage(heading, " ".join(paragraph)))
            paragraph.clear()

    for raw in markdown.splitlines():
        line = raw.strip()
        if line.startswith("#"):
            flush()
            heading = line.lstrip("#").strip()
        elif not line or set(line) <= set("|-: "):
            flush()
        elif line.startswith(("-", "*", "|")) or re.match(r"\d+\.", line):
            flush()
            cells = (
                [c.strip() for c in line.strip("|").split("|")] if line.startswith("|") else [line]
            )
            passages.append(
                Passage(heading, " — ".join(c.lstrip("-* ").strip() for c in cells if c))
            )
        else:
            paragraph.append(line)
    flush()
    return passages


class BM25:
    """Okapi BM25 (k1 = 1.5, b = 0.75) over tokenized documents."""

    def __init__(self, documents: list[list[str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.documents = documents
        self.k1, self.b = k1, b
        self.avg_len = sum(map(len, documents)) / max(len(documents), 1)
        df: Counter[str] = Counter()
        for doc in documents:
            df.update(set(doc))
        n = len(documents)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.tf = [Counter(doc) for doc in documents]

    def scores(self, query: list[str]) -> list[float]:
        """The score of every document for ``query``."""
        out = []
        for doc, tf in zip(self.documents, self.tf, strict=True):
            norm = self.k1 * (1 - self.b + self.b * len(doc) / (self.avg_len or 1))
            out.append(
                sum(
                    self.idf.get(t, 0.0) * tf[t] * (self.k1 + 1) / (tf[t] + norm)
                    for t in query
                    if t in tf
                )
            )
        return out


class BaselineSession(InProcessSession):
    """BM25 answers plus confident slot-filling tool calls."""

    def __init__(self, benchmark: Benchmark) -> None:
        super().__init__("local/baseline")
        self.benchmark = benchmark
        self.passages = split_passages(benchmark.knowledge_base)
        self.index = BM25([tokenize(p.heading + " " + p.text) for p in self.passages])
        self.known_ids = set(_ID.findall(benchmark.knowledge_base))
        self.attendee: str | None = None
        self.last_session_id: str | None = None

    def on_start(self, setup: SessionSetup) -> None:
        for message in setup.history:
            if message.role == "user":
                self._remember(message.text)

    def _remember(self, text: str) -> None:
        match = _NAME.search(text)
        if match:
            self.attendee = match.group(1)

    async def respond(self, user_text: str) -> None:
        self._remember(user_text)
        lowered = user_text.lower()
        session_id = self._session_id(user_text)
        answered_by_tool = False
        for tool in self.benchmark.tools:
            action = _action_of(tool)
            if action is None or not any(w in lowered for w in _ACTION_WORDS[action]):
                continue
            args = self._fill(tool, action, user_text, session_id)
            if args is None:
                continue
            result = await self.call_tool(tool.name, args)
            await self.say(_describe(tool, result))
            answered_by_tool = True
            break
        if not answered_by_tool:
            await self.say(self.best_passage(user_text))
        await self.report_usage(input_tokens=len(user_text.split()), output_tokens=0)

    def best_passage(self, question: str) -> str:
        """The knowledge-base passage that best answers ``question``."""
        scores = self.index.scores(tokenize(question))
        if not scores or max(scores) <= 0:
            return "Sorry, I don't have information about that."
        best = self.passages[max(range(len(scores)), key=scores.__getitem__)]
        return f"{best.heading}: {best.text}" if best.heading else best.text

    def _session_id(self, text: str) -> str | None:
        for candidate in _ID.findall(text):
            if candidate in self.known_ids:
                self.last_session_id = candidate
                return candidate
        # A title spoken by name: the passage holding the most of the user's words and an id.
        scores = self.index.scores(tokenize(text))
        ranked = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
        for i in ranked[:1]:
            if scores[i] <= 0:
                break
            ids = [c for c in _ID.findall(self.passages[i].text) if c in self.known_ids]
            if len(ids) == 1:
                self.last_session_id = ids[0]
                return ids[0]
        return None

    def _fill(
        self, tool: ToolSpec, action: str, text: str, session_id: str | None
    ) -> dict[str, Any] | None:
        props: dict[str, Any] = tool.parameters.get("properties", {})
        args: dict[str, Any] = {}
        lowered = text.lower()
        for param, schema in props.items():
            enum = schema.get("enum")
            value: Any = None
            if enum:
                value = next((v for v in enum if str(v).replace("_", " ") in lowered), None)
                if (
                    value is None
                    and action == "cancel"
                    and "registration" in enum
                    and ("registration" in lowered or session_id)
                ):
                    value = "registration"
            elif param == "name" or param.endswith("_name"):
                value = self.attendee
            elif param == "id" or param.endswith("_id") or param.startswith("session_id"):
                value = session_id
            elif param in ("details",):
                value = session_id or None
            elif schema.get("type", "string") == "string":
                value = _content_phrase(action, text)
            if value is not None:
                args[param] = value
        if any(r not in args for r in tool.required):
            return None
        return args


def _action_of(tool: ToolSpec) -> str | None:
    words = (tool.name + " " + tool.description).lower()
    for action, keys in (
        ("cancel", ("cancel",)),
        ("end", ("end_session", "end the", "hang up")),
        ("conflict", ("conflict",)),
        ("schedule", ("schedule",)),
        ("vote", ("vote",)),
        ("dietary", ("dietary",)),
        ("support", ("support",)),
        ("suggest", ("suggest",)),
        ("register", ("register",)),
    ):
        if any(k in tool.name.lower() for k in keys) or (action == "end" and "end" in tool.name):
            return action
        if any(k in words for k in keys) and action in ("cancel", "register"):
            return action
    return None


def _content_phrase(action: str, text: str) -> str | None:
    lowered = text.lower()
    if action == "dietary":
        found = [w for w in _ACTION_WORDS["dietary"][:6] if w in lowered]
        return {"gluten": "gluten-free"}.get(found[0], found[0]) if found else None
    if action in ("support", "suggest"):
        return text.strip()
    return None


def _describe(tool: ToolSpec, result: Any) -> str:
    if isinstance(result, dict) and result.get("status") == "error":
        return f"That didn't work: {result.get('message', result.get('error', 'unknown error'))}."
    return f"Done: {tool.name.replace('_', ' ')} succeeded."


def make_baseline(benchmark: Benchmark | None) -> BaselineSession:
    """Build the baseline for ``benchmark``."""
    from voxbench.core.errors import ConfigError

    if benchmark is None:
        raise ConfigError(
            "the baseline target needs a benchmark (its knowledge base)", field="target"
        )
    return BaselineSession(benchmark)
