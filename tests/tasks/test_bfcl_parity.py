"""``function_call_match`` against BFCL's AST checker (issue 26 item 4): a port of BFCL's
``simple_function_checker`` rules for Python (``standardize_string``, the type check with an
int accepted as a float, the nested type check of arrays, ``list_checker``, required and
optional parameters, possible-answer lists), compared on seeded, varied generated calls."""

from __future__ import annotations

import json
import random
import re
from typing import Any

from voxbench.metrics.registry import METRICS, ScoringContext

TYPES: dict[str, type] = {"string": str, "integer": int, "float": float, "boolean": bool,
                          "array": list}  # fmt: skip


def standardize_string(text: str) -> str:
    return re.sub(r"[ \,\.\/\-\_\*\^]", "", text).lower().replace("'", '"')


def bfcl_simple_function_checker(
    func: dict[str, Any], output: dict[str, Any], possible: dict[str, list[Any]]
) -> bool:
    """BFCL's checker for one call (language Python), as in its ``ast_checker.py``."""
    props, required = func["parameters"]["properties"], func["parameters"]["required"]
    if func["name"] not in output:
        return False
    params = output[func["name"]]
    if any(p not in params for p in required):
        return False
    for param, value in params.items():
        if param not in props or param not in possible:
            return False
        declared = props[param]["type"]
        expected = TYPES[declared]
        if declared == "float" and type(value) is int:
            value = float(value)
        if type(value) is not expected:
            return False
        if declared == "array":
            nested = TYPES[props[param]["items"]["type"]]
            if any(type(v) is not nested for v in value):
                return False
            std = [standardize_string(v) if isinstance(v, str) else v for v in value]
            accepted = [[standardize_string(x) if isinstance(x, str) else x for x in p]
                        for p in possible[param] if isinstance(p, list)]  # fmt: skip
            if std not in accepted:
                return False
            continue
        if expected is str:
            accepted = [standardize_string(p) for p in possible[param] if isinstance(p, str)]
            if standardize_string(value) not in accepted:
                return False
            continue
        if value not in possible[param]:
            return False
    return all(p in params or "" in possible[p] for p in possible)


WORDS = ["Team Lunch", "centimeters", "New York", "O'Brien", "São Paulo", "x_y", "a.b/c", "EUR"]


def _value(rng: random.Random, declared: str, item: str | None) -> Any:
    if declared == "string":
        return rng.choice(WORDS)
    if declared == "integer":
        return rng.randint(-3, 50)
    if declared == "float":
        return rng.choice([0.5, 1.25, 10.0, 3.0, 2.75])
    if declared == "boolean":
        return rng.random() < 0.5
    return [_value(rng, item or "integer", None) for _ in range(rng.randint(0, 3))]


def _perturb(rng: random.Random, value: Any, declared: str) -> Any:
    roll = rng.random()
    if roll < 0.45:
        return value
    if declared == "string":
        return rng.choice([value.upper(), value.replace(" ", ""), value + ".", f" {value} ",
                           value.replace(" ", "-"), value[:-1] or "?", "other"])  # fmt: skip
    if declared == "integer":
        return rng.choice([str(value), float(value), value + 1, bool(value % 2)])
    if declared == "float":
        return rng.choice([str(value), int(value), value + 0.5, value])
    if declared == "boolean":
        return rng.choice([not value, int(value), str(value).lower()])
    return rng.choice([[str(v) if not isinstance(v, str) else v for v in value],
                       list(reversed(value)), value[:-1], [*value, value[0] if value else 1],
                       [float(v) if isinstance(v, int) else v for v in value]])  # fmt: skip


def _case(rng: random.Random) -> tuple[dict[str, Any], dict[str, list[Any]], dict[str, Any]]:
    props: dict[str, Any] = {}
    possible: dict[str, list[Any]] = {}
    output: dict[str, Any] = {}
    required = []
    for i in range(rng.randint(1, 4)):
        declared = rng.choice(list(TYPES))
        name = f"p{i}"
        item = rng.choice(["integer", "string"]) if declared == "array" else None
        props[name] = {"type": declared, **({"items": {"type": item}} if item else {})}
        accepted = [_value(rng, declared, item) for _ in range(rng.randint(1, 2))]
        optional = rng.random() < 0.3
        possible[name] = [*accepted, ""] if optional else accepted
        if not optional:
            required.append(name)
        if optional and rng.random() < 0.4:
            continue  # left out
        if rng.random() < 0.05:
            continue  # a required one left out, sometimes
        output[name] = _perturb(rng, rng.choice(accepted), declared)
    if rng.random() < 0.05:
        output["extra"] = 1
    func = {"name": "f", "parameters": {"type": "dict", "properties": props, "required": required}}
    return func, possible, output


def test_function_call_match_equals_bfcls_checker_on_generated_calls() -> None:
    rng = random.Random(26)
    metric = METRICS["function_call_match"]
    differ = []
    verdicts = []
    for _ in range(400):
        func, possible, output = _case(rng)
        reference = json.dumps([{"f": possible}])
        ctx = ScoringContext(reference=reference, language="en", target_language="en",
                             answer="function_call",
                             tool_schemas={"f": func["parameters"]})  # fmt: skip
        reply = json.dumps([{"name": "f", "arguments": output}])
        ours = metric.score(reply, ctx)["correct"]
        theirs = int(bfcl_simple_function_checker(func, {"f": output}, possible))
        verdicts.append(theirs)
        if ours != theirs:
            differ.append((possible, output, ours, theirs))
    assert differ == []
    assert 0.2 < sum(verdicts) / len(verdicts) < 0.8  # both verdicts are well represented


def test_the_issues_examples() -> None:
    func = {"name": "f", "parameters": {"type": "dict", "required": ["n", "ids", "title", "unit"],
            "properties": {"n": {"type": "integer"}, "title": {"type": "string"},
                           "ids": {"type": "array", "items": {"type": "integer"}},
                           "unit": {"type": "string"}}}}  # fmt: skip
    possible = {"n": [42], "ids": [[3, 1, 2]], "title": ["Team Lunch"], "unit": ["centimeters"]}
    ctx = ScoringContext(reference=json.dumps([{"f": possible}]), language="en",
                         target_language="en", answer="function_call",
                         tool_schemas={"f": func["parameters"]})  # fmt: skip
    good = {"n": 42, "ids": [3, 1, 2], "title": "TeamLunch", "unit": "centimeters."}
    for change, verdict in (({}, 1), ({"n": "42"}, 0), ({"n": 42.0}, 0),
                            ({"ids": ["3", "1", "2"]}, 0)):  # fmt: skip
        output = {**good, **change}
        reply = json.dumps([{"name": "f", "arguments": output}])
        assert METRICS["function_call_match"].score(reply, ctx)["correct"] == verdict, change
        assert bfcl_simple_function_checker(func, {"f": output}, possible) == bool(verdict)
