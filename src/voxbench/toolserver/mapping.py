"""A mapping from an agent's tool names and argument shapes to the benchmark's.

``--mapping FILE`` (YAML, validated strictly: unknown keys, unknown benchmark tools or
parameters and malformed paths are errors naming the file and field)::

    tools:
      book_talk:                       # the tool as the agent knows it
        tool: register_for_session     # the benchmark tool it stands for
        arguments:                     # benchmark parameter: dotted path in the agent's call
          name: attendee.full_name
          session_id: talk.id

A tool without an entry keeps its name and arguments; ``arguments`` left out passes the
agent's arguments unchanged. The agent is shown the mapped tools: its names, and for mapped
arguments an object schema nesting each benchmark parameter's schema at its path.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from voxbench.core.benchmark import ToolSpec
from voxbench.core.errors import ConfigError
from voxbench.core.yamlfile import read_yaml

_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*(\.[A-Za-z_][A-Za-z0-9_\-]*)*")


class ToolRename(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, str] | None = None
    """Benchmark parameter → dotted path in the agent's arguments."""


class MappingFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tools: dict[str, ToolRename] = Field(default_factory=dict)


class ArgumentError(ValueError):
    """An agent's call does not fit the mapping (a path that is not in its arguments)."""


class ToolMapping:
    """Agent-side tools ↔ benchmark tools."""

    def __init__(self, tools: list[ToolSpec], renames: dict[str, ToolRename] | None = None):
        self.benchmark_tools = {t.name: t for t in tools}
        self.renames = dict(renames or {})
        mapped = {r.tool for r in self.renames.values()}
        self.agent_names = {
            **{t: t for t in self.benchmark_tools if t not in mapped},
            **{agent: r.tool for agent, r in self.renames.items()},
        }
        """Agent tool name → benchmark tool name."""

    def agent_tools(self) -> list[ToolSpec]:
        """The tools as the agent sees them."""
        out = []
        for agent, bench in self.agent_names.items():
            spec = self.benchmark_tools[bench]
            rename = self.renames.get(agent)
            parameters = spec.parameters
            if rename is not None and rename.arguments is not None:
                parameters = _nested_schema(spec.parameters, rename.arguments)
            out.append(ToolSpec(name=agent, description=spec.description, parameters=parameters))
        return out

    def to_benchmark(self, name: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """An agent's call as the benchmark's ``(tool, arguments)``.

        An unknown tool keeps its name (the runner records it as a call of a tool the
        benchmark does not have); a mapped path missing from the arguments raises
        ``ArgumentError``."""
        bench = self.agent_names.get(name, name)
        rename = self.renames.get(name)
        if rename is None or rename.arguments is None:
            return bench, arguments
        spec = self.benchmark_tools.get(bench)
        required = set(spec.parameters.get("required", []) or []) if spec else set()
        out: dict[str, Any] = {}
        for param, path in rename.arguments.items():
            found, value = _lookup(arguments, path)
            if found:
                out[param] = value
            elif param in required:
                raise ArgumentError(f"argument {path!r} is missing")
        return bench, out


def _lookup(arguments: dict[str, Any], path: str) -> tuple[bool, Any]:
    value: Any = arguments
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return False, None
        value = value[part]
    return True, value


def _nested_schema(parameters: dict[str, Any], arguments: dict[str, str]) -> dict[str, Any]:
    props = parameters.get("properties", {}) or {}
    required = set(parameters.get("required", []) or [])
    root: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    for param, path in arguments.items():
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            child = node["properties"].setdefault(
                part, {"type": "object", "properties": {}, "required": []}
            )
            if param in required and part not in node["required"]:
                node["required"].append(part)
            node = child
        node["properties"][parts[-1]] = copy.deepcopy(props.get(param, {}))
        if param in required:
            node["required"].append(parts[-1])
    return root


def load_mapping(path: str | Path, tools: list[ToolSpec]) -> ToolMapping:
    """Read and validate a mapping file against the benchmark's ``tools``."""
    p = Path(path)
    data = read_yaml(p, what="tool mapping YAML")
    if data is None:
        data = {}
    try:
        parsed = MappingFile.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "tools"
        raise ConfigError(
            first["msg"], file=p, field=where, expected="tools: {AGENT_NAME: {tool, arguments}}"
        ) from None
    by_name = {t.name: t for t in tools}
    seen: dict[str, str] = {}
    for agent, rename in parsed.tools.items():
        field = f"tools.{agent}"
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]{0,63}", agent):
            raise ConfigError("not a tool name", file=p, field=field, expected="[A-Za-z_][\\w-]*")
        spec = by_name.get(rename.tool)
        if spec is None:
            raise ConfigError(
                f"the benchmark has no tool {rename.tool!r}",
                file=p,
                field=f"{field}.tool",
                expected=", ".join(sorted(by_name)),
            )
        if rename.tool in seen:
            raise ConfigError(
                f"{rename.tool!r} is already mapped from {seen[rename.tool]!r}",
                file=p,
                field=f"{field}.tool",
                expected="one agent tool per benchmark tool",
            )
        seen[rename.tool] = agent
        if (
            agent in by_name
            and agent != rename.tool
            and agent not in {r.tool for r in parsed.tools.values()}
        ):
            raise ConfigError(
                f"{agent!r} is also a benchmark tool that is not renamed",
                file=p,
                field=field,
                expected="an agent name that does not hide another benchmark tool",
            )
        params = set((spec.parameters.get("properties") or {}).keys())
        for param, arg_path in (rename.arguments or {}).items():
            where = f"{field}.arguments.{param}"
            if param not in params:
                raise ConfigError(
                    f"{rename.tool!r} has no parameter {param!r}",
                    file=p,
                    field=where,
                    expected=", ".join(sorted(params)) or "no parameters",
                )
            if not _PATH.fullmatch(arg_path):
                raise ConfigError(
                    f"{arg_path!r} is not a dotted path", file=p, field=where, expected="a.b.c"
                )
        if rename.arguments is not None:
            missing = set(spec.parameters.get("required", []) or []) - set(rename.arguments)
            if missing:
                raise ConfigError(
                    f"required parameter(s) {sorted(missing)} of {rename.tool!r} are not mapped",
                    file=p,
                    field=f"{field}.arguments",
                    expected="a path for every required parameter",
                )
    return ToolMapping(tools, parsed.tools)
