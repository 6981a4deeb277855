"""The benchmark format shared by ConversationBench and AIEWF, read without running it.

Both keep a benchmark as Python modules:

- ``turns.py``: ``turns = [...]``, one dict per user turn with ``input``, ``golden_text``,
  ``required_function_call`` (None, ``{name, args}`` or a list of them),
  ``function_call_response`` (the canned result, or a list parallel to the calls),
  ``categories``, ``subcategory`` and ``audio_file``;
- ``tools.py``: pipecat ``FunctionSchema(name=, description=, properties=, required=)``
  calls, usually gathered in a ``ToolsSchema(standard_tools=[...])``;
- ``system.py``: ``system_instruction``, a preamble string + the knowledge base read from
  ``data/knowledge_base.txt`` (+ often a tools section).

This module reads the first two into voxbench's data: turns with required calls, tool specs,
canned backend results and the dimension rule; ``prompt`` reads ``system.py``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from voxbench.core.benchmark import ToolSpec
from voxbench.importers.pyliteral import PyModule, call_name, describe_node

STATE_TRACKING_CATEGORIES = (
    "long_range_memory",
    "cross_turn_reasoning",
    "cancellation_flow",
    "implicit_correction",
    "error_recovery",
)
AMBIGUITY_CATEGORIES = ("ambiguous_entity", "numerical_reasoning")
DIMENSIONS_BY_CATEGORY: dict[str, list[str]] = {
    **{c: ["state_tracking"] for c in STATE_TRACKING_CATEGORIES},
    **{c: ["ambiguity_handling"] for c in AMBIGUITY_CATEGORIES},
}
"""Their rule for the extra judged dimensions, by turn category, when turns.py states none."""
DIMENSION_NAMES = {"tool_use_correct": "tool_use"}
"""Their dimension names that voxbench spells differently."""

FUZZY_RATIO = 82
"""Free-text arguments match at this rapidfuzz token-set ratio, close to their judge's
``SequenceMatcher`` ≥ 0.82 rule for non-id strings."""

FUNCTION_SCHEMA_PARAMS = ("name", "description", "properties", "required")
TURN_KEYS = {
    "input",
    "category",
    "golden_text",
    "required_function_call",
    "function_call_response",
    "categories",
    "subcategory",
    "audio_file",
}


@dataclass
class ConvertedTurn:
    """One upstream turn in voxbench's shape, plus its canned results and audio reference."""

    turn: dict[str, Any]
    canned: list[dict[str, Any]]
    audio_file: str | None
    calls: int


def is_id_like(arg: str) -> bool:
    """Arguments compared exactly: ``id``, ``*_id`` and numbered ones like ``session_id_1``."""
    return re.fullmatch(r"(?:\w*_)?id(?:_?\d+)?", arg) is not None


def matcher_for(arg: str, value: Any) -> dict[str, Any] | None:
    """The matcher written for a golden argument; None keeps voxbench's default.

    Their judge compares ids exactly and other strings loosely (containment, token overlap,
    ``SequenceMatcher`` ≥ 0.82). Here: ids keep the default exact match; text with words
    matches fuzzily; a value with no letters ("918501", "12:15") must appear as a whole
    token, so "session 918501" matches but "918502" does not, as a ratio would allow.
    """
    if not isinstance(value, str) or not value.strip() or is_id_like(arg):
        return None
    if any(c.isalpha() for c in value):
        return {"fuzzy": FUZZY_RATIO}
    return {"regex": rf"(?<![\w.]){re.escape(value.strip())}(?![\w]|\.\d)"}


def plain_data(value: Any, module: PyModule, where: str) -> Any:
    """``value`` as YAML/JSON-safe data: tuples become lists; sets and bytes are refused."""
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, list | tuple):
        return [plain_data(v, module, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str | int | float | bool):
                raise module.error(f"{where}: a dict key of type {type(k).__name__}")
            out[k] = plain_data(v, module, f"{where}.{k}")
        return out
    raise module.error(
        f"{where}: a value of type {type(value).__name__}",
        expected="strings, numbers, booleans, None, lists and dicts",
    )


# -- tools ----------------------------------------------------------------------------


def read_tools(module: PyModule) -> tuple[list[dict[str, Any]], list[str]]:
    """Tool specs from the ``FunctionSchema(...)`` calls of ``tools.py``, and notes.

    With a ``ToolsSchema(standard_tools=[...])`` the tools it lists are taken in its order;
    without one, every ``FunctionSchema`` call in source order.
    """
    notes: list[str] = []
    calls = list(module.calls_named("FunctionSchema"))
    if not calls:
        raise module.error(
            "no FunctionSchema(...) call found",
            expected="tools declared as FunctionSchema(name=..., description=..., properties=..., required=...)",
        )
    listed = _tools_schema_order(module)
    chosen = listed if listed is not None else calls
    if listed is not None:
        left_out = [c for c in calls if all(c is not x for x in listed)]
        if left_out:
            names = ", ".join(str(_schema_args(module, c)["name"]) for c in left_out)
            notes.append(
                f"{module.label}: FunctionSchema definitions not listed in ToolsSchema were left out: {names}"
            )
    tools: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for call in chosen:
        spec = _tool_spec(module, call)
        if spec["name"] in seen:
            raise module.error(
                f"tool {spec['name']!r} is defined twice (also on line {seen[spec['name']]})", call
            )
        seen[spec["name"]] = call.lineno
        tools.append(spec)
    return tools, notes


def _tools_schema_order(module: PyModule) -> list[ast.Call] | None:
    schemas = list(module.calls_named("ToolsSchema"))
    if not schemas:
        return None
    node = schemas[-1]
    listing: ast.AST | None = next(
        (kw.value for kw in node.keywords if kw.arg == "standard_tools"),
        node.args[0] if node.args else None,
    )
    if isinstance(listing, ast.Name):
        listing = module.binding(listing.id)
    if not isinstance(listing, ast.List | ast.Tuple):
        raise module.error(
            "ToolsSchema(standard_tools=...) is not a list", node, expected="a list literal"
        )
    out: list[ast.Call] = []
    for element in listing.elts:
        target: ast.AST | None = element
        if isinstance(element, ast.Name):
            target = module.binding(element.id)
        if not (isinstance(target, ast.Call) and call_name(target) == "FunctionSchema"):
            raise module.error(
                f"ToolsSchema lists {describe_node(element)}, which is not a FunctionSchema(...)",
                element,
            )
        out.append(target)
    return out


def _schema_args(module: PyModule, call: ast.Call) -> dict[str, Any]:
    if len(call.args) > len(FUNCTION_SCHEMA_PARAMS):
        raise module.error("FunctionSchema(...) has too many positional arguments", call)
    nodes: dict[str, ast.AST] = dict(zip(FUNCTION_SCHEMA_PARAMS, call.args, strict=False))
    for kw in call.keywords:
        if kw.arg is None:
            raise module.error("FunctionSchema(**...) cannot be read", call)
        if kw.arg not in FUNCTION_SCHEMA_PARAMS:
            raise module.error(
                f"FunctionSchema has no argument {kw.arg!r}",
                kw.value,
                expected=", ".join(FUNCTION_SCHEMA_PARAMS),
            )
        nodes[kw.arg] = kw.value
    return {k: module.evaluate(v) for k, v in nodes.items()}


def _tool_spec(module: PyModule, call: ast.Call) -> dict[str, Any]:
    args = _schema_args(module, call)
    name = args.get("name")
    if not isinstance(name, str):
        raise module.error("FunctionSchema(name=...) is missing or not a string", call)
    description = args.get("description")
    if not isinstance(description, str):
        raise module.error(f"tool {name!r}: description is missing or not a string", call)
    properties = plain_data(args.get("properties") or {}, module, f"{name}.properties")
    required = args.get("required") or []
    if not isinstance(properties, dict):
        raise module.error(f"tool {name!r}: properties is not a dict", call)
    if not isinstance(required, list | tuple) or not all(isinstance(r, str) for r in required):
        raise module.error(f"tool {name!r}: required is not a list of names", call)
    spec = {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(required)},
    }
    try:
        ToolSpec.model_validate(spec)
    except ValidationError as exc:
        detail = "; ".join(e["msg"] for e in exc.errors())
        raise module.error(f"tool {name!r}: {detail}", call) from exc
    return spec


# -- turns ----------------------------------------------------------------------------


def read_turns(
    module: PyModule, tools: list[dict[str, Any]]
) -> tuple[list[ConvertedTurn], list[str]]:
    """Every turn of ``turns.py`` converted, and notes about what was left out."""
    node = module.require_binding("turns")
    raw = module.evaluate(node)
    if not isinstance(raw, list) or not raw:
        raise module.error("`turns` is not a non-empty list", node, expected="a list of dicts")
    by_name = {t["name"]: t for t in tools}
    notes: list[str] = []
    out = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise module.error(f"turns[{i}] is a {type(item).__name__}", node, expected="a dict")
        ignored = sorted(str(k) for k in item if k not in TURN_KEYS)
        if ignored:
            notes.append(f"{module.label}: turns[{i}]: ignored keys {', '.join(ignored)}")
        out.append(_convert_turn(module, i, item, by_name))
    return out, notes


def read_dimension_rules(module: PyModule) -> dict[str, list[str]]:
    """Extra dimensions by category: turns.py's own ``CATEGORY_DIMENSIONS`` when it has one.

    The mapping changed between upstream versions, so the checkout's own table wins over
    the built-in one.
    """
    if module.binding("CATEGORY_DIMENSIONS") is None:
        return {k: list(v) for k, v in DIMENSIONS_BY_CATEGORY.items()}
    table = module.value_of("CATEGORY_DIMENSIONS")
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, list | tuple) and all(isinstance(d, str) for d in v)
        for k, v in table.items()
    ):
        raise module.error(
            "`CATEGORY_DIMENSIONS` is not a mapping of category to dimension names",
            module.binding("CATEGORY_DIMENSIONS"),
        )
    return {k: [DIMENSION_NAMES.get(d, d) for d in v] for k, v in table.items() if v}


def _text(module: PyModule, item: dict[str, Any], key: str, where: str) -> str:
    value = item.get(key)
    if not isinstance(value, str) or not value.strip():
        raise module.error(f"{where}.{key} is missing or empty", expected="a non-empty string")
    return value


def _convert_turn(
    module: PyModule, i: int, item: dict[str, Any], tools: dict[str, dict[str, Any]]
) -> ConvertedTurn:
    where = f"turns[{i}]"
    turn: dict[str, Any] = {
        "id": str(i),
        "text": _text(module, item, "input", where),
        "golden_text": _text(module, item, "golden_text", where),
    }
    categories = item.get("categories") or item.get("category") or []
    if isinstance(categories, str):
        categories = [categories]
    if not isinstance(categories, list | tuple) or not all(isinstance(c, str) for c in categories):
        raise module.error(f"{where}.categories is not a list of names")
    if categories:
        turn["categories"] = list(categories)
    subcategory = item.get("subcategory")
    if subcategory is not None:
        if not isinstance(subcategory, str):
            raise module.error(f"{where}.subcategory is not a string")
        turn["subcategory"] = subcategory

    calls = _required_calls(module, item.get("required_function_call"), where, tools)
    if calls:
        turn["expect"] = {"required_calls": calls}
    canned = _canned(module, item.get("function_call_response"), calls, where)
    audio = item.get("audio_file")
    if audio is not None and not isinstance(audio, str):
        raise module.error(f"{where}.audio_file is not a string")
    return ConvertedTurn(turn=turn, canned=canned, audio_file=audio, calls=len(calls))


def _required_calls(
    module: PyModule, value: Any, where: str, tools: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    if value is None:
        return []
    listed = value if isinstance(value, list | tuple) else [value]
    calls = []
    for j, raw in enumerate(listed):
        at = f"{where}.required_function_call" + (
            f"[{j}]" if isinstance(value, list | tuple) else ""
        )
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            raise module.error(f"{at} is not a call", expected="a dict {name: ..., args: {...}}")
        name, args = raw["name"], raw.get("args") or {}
        if not isinstance(args, dict):
            raise module.error(f"{at}.args is not a dict")
        tool = tools.get(name)
        if tool is None:
            raise module.error(
                f"{at} calls {name!r}, which tools.py does not define",
                expected=f"one of {', '.join(sorted(tools))}",
            )
        props = tool["parameters"]["properties"]
        unknown = [a for a in args if a not in props]
        if unknown:
            raise module.error(f"{at}: {name} has no parameter {', '.join(map(repr, unknown))}")
        missing = [a for a in tool["parameters"]["required"] if a not in args]
        if missing:
            raise module.error(
                f"{at}: golden call lacks the required argument(s) {', '.join(map(repr, missing))}"
            )
        call: dict[str, Any] = {"name": name, "args": plain_data(args, module, f"{at}.args")}
        match = {a: m for a, v in args.items() if (m := matcher_for(a, v)) is not None}
        if match:
            call["match"] = match
        calls.append(call)
    return calls


def _canned(
    module: PyModule, response: Any, calls: list[dict[str, Any]], where: str
) -> list[dict[str, Any]]:
    # Upstream hands the k-th element of a list to the k-th call and a single value to every
    # call. Each listed result is also keyed by the golden call it was written for, so
    # voxbench's own harness (``canned_results: by_call``) can answer a model that reorders
    # its calls with the same results; the compat harness replays upstream's order.
    if response is None:
        return []
    at = f"{where}.function_call_response"
    if isinstance(response, list | tuple):
        results = [plain_data(r, module, f"{at}[{k}]") for k, r in enumerate(response)]
        pairs = [(calls[k] if k < len(calls) else None, r) for k, r in enumerate(results)]
    else:
        # A single value answers every call of the turn, however many there are.
        return [{"result": plain_data(response, module, at), "every_call": True}]
    return [({"call": c} if c is not None else {}) | {"result": r} for c, r in pairs]


__all__ = [
    "DIMENSIONS_BY_CATEGORY",
    "FUZZY_RATIO",
    "ConvertedTurn",
    "read_dimension_rules",
    "read_tools",
    "read_turns",
]
