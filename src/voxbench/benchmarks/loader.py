"""Load and validate benchmark packages.

A package is a directory of declarative data, never code:

- ``benchmark.yaml``: id, version, description, current_date, system_prompt, dimensions
- ``knowledge_base.md``: the knowledge base injected into the system prompt
- ``tools.yaml``: ``tools:`` a list of {name, description, parameters (JSON schema)}
- ``turns.yaml``: ``turns:`` a list of turns (text, golden_text, categories, audio, expect)
- ``backend.yaml``: the tool backend simulator (see ``voxbench.benchmarks.backend``)

Every problem is reported with its file and field; ``validate_benchmark`` collects all of
them, ``load_benchmark`` raises if there is any.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import ValidationError

from voxbench.benchmarks.backend import BackendSpec
from voxbench.core.benchmark import Benchmark, ExpectedCall, ToolSpec, Turn
from voxbench.core.errors import BenchmarkError, ConfigError, RunError
from voxbench.core.matching import args_match
from voxbench.core.records import RunInfo
from voxbench.core.yamlfile import read_text_file, read_yaml

BUILTIN_DIR = Path(__file__).parent / "data"
FILES = ("benchmark.yaml", "knowledge_base.md", "tools.yaml", "turns.yaml", "backend.yaml")
_HEADER_KEYS = {
    "id",
    "version",
    "description",
    "current_date",
    "system_prompt",
    "dimensions",
    "scoring",
}
PROMPT_VARIABLES = ("knowledge_base", "current_date", "tools")
"""The ``{name}`` placeholders a system prompt template may use."""
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def builtin_benchmarks() -> list[str]:
    """Names of the benchmarks shipped with voxbench."""
    return sorted(p.name for p in BUILTIN_DIR.iterdir() if (p / "benchmark.yaml").is_file())


def resolve_benchmark_dir(name_or_path: str | Path) -> Path:
    """A built-in benchmark name or a directory → the package directory."""
    path = Path(name_or_path)
    if (path / "benchmark.yaml").is_file():
        return path
    builtin = BUILTIN_DIR / str(name_or_path)
    if (builtin / "benchmark.yaml").is_file():
        return builtin
    known = ", ".join(builtin_benchmarks())
    raise BenchmarkError(
        f"no benchmark named {name_or_path!r}",
        expected=f"a built-in name ({known}) or a directory holding benchmark.yaml",
    )


_LOADED: dict[tuple[str, tuple[tuple[str, int, int], ...]], Benchmark] = {}
"""Benchmarks read in this process, by directory and the size and time of each of its files:
``voxbench run`` needs its benchmark four times (checks, run path, run, evaluation), and the
75-turn one takes most of a second to read and validate."""
_LOADED_MAX = 8


def load_benchmark(name_or_path: str | Path) -> Benchmark:
    """Load a benchmark; raise one ``BenchmarkError`` listing every problem found.

    Read once per process while its files stay as they are: each caller gets its own copy."""
    root = resolve_benchmark_dir(name_or_path)
    key = (str(root.resolve()), _file_stamps(root))
    cached = _LOADED.get(key)
    if cached is not None:
        return cached.model_copy(deep=True)
    benchmark, problems = _load(root)
    if problems:
        if len(problems) == 1:
            raise problems[0]
        listing = "\n".join(f"  - {p}" for p in problems)
        raise BenchmarkError(f"{len(problems)} problems in the benchmark:\n{listing}")
    assert benchmark is not None
    if len(_LOADED) >= _LOADED_MAX:
        _LOADED.pop(next(iter(_LOADED)))
    _LOADED[key] = benchmark.model_copy(deep=True)
    return benchmark


def _file_stamps(root: Path) -> tuple[tuple[str, int, int], ...]:
    """Every file of the package with its size and modification time (what a change moves)."""
    stamps = []
    for file in sorted(root.rglob("*")):
        try:
            st = file.stat()
        except OSError:
            continue
        if file.is_file():
            stamps.append((file.relative_to(root).as_posix(), st.st_size, st.st_mtime_ns))
    return tuple(stamps)


def load_run_benchmark(info: RunInfo, run_path: Path) -> Benchmark:
    """The benchmark a recorded run was made with, as it was.

    A run records where its benchmark lived; a built-in benchmark is found by name when that
    path is gone (voxbench reinstalled elsewhere, the run copied to another machine). A
    benchmark whose content changed since the run is refused: the run's turns would no longer
    match its expectations."""
    where = info.benchmark_path
    source: str | Path = (
        where if where and Path(where, "benchmark.yaml").is_file() else info.benchmark
    )
    benchmark = load_benchmark(source)
    if benchmark.content_hash != info.benchmark_hash:
        raise RunError(
            f"{run_path}: benchmark {benchmark.id} changed since this run "
            f"(hash {info.benchmark_hash} → {benchmark.content_hash}); start a new run"
        )
    return benchmark


def validate_benchmark(path: str | Path) -> list[BenchmarkError]:
    """Every problem of the package at ``path`` (an empty list when it is valid).

    Beyond what loading checks, each turn's audio file is read: an empty or non-audio
    file would otherwise fail only when a run reaches that turn."""
    try:
        root = resolve_benchmark_dir(path)
    except BenchmarkError as exc:
        return [exc]
    benchmark, problems = _load(root)
    if benchmark is not None:
        problems += turn_audio_problems(benchmark)
    return problems


def turn_audio_problems(benchmark: Benchmark) -> list[BenchmarkError]:
    """Every turn audio file that cannot be read as audio (empty, not audio, truncated)."""
    from voxbench.audio.wav import read_wav  # the audio stack loads only when asked
    from voxbench.core.errors import AudioError

    problems = []
    for i, turn in enumerate(benchmark.turns):
        path = benchmark.audio_path(turn)
        if path is None:
            continue
        try:
            read_wav(path)
        except AudioError as exc:
            problems.append(
                BenchmarkError(
                    str(exc),
                    file=benchmark.root / "turns.yaml" if benchmark.root else None,
                    field=f"turns[{i}] (id {turn.id}).audio",
                    expected="a readable, non-empty audio file",
                )
            )
    return problems


def _as_benchmark_error(exc: ConfigError) -> BenchmarkError:
    return BenchmarkError(exc.detail, file=exc.file, field=exc.field, expected=exc.expected)


def _read_yaml(path: Path, problems: list[BenchmarkError]) -> Any:
    if not path.is_file():
        problems.append(BenchmarkError("file is missing", file=path))
        return None
    try:
        return read_yaml(path)
    except ConfigError as exc:
        problems.append(_as_benchmark_error(exc))
        return None


def _read_text(path: Path, problems: list[BenchmarkError]) -> str | None:
    if not path.is_file():
        problems.append(BenchmarkError("file is missing", file=path))
        return None
    try:
        return read_text_file(path)
    except ConfigError as exc:
        problems.append(_as_benchmark_error(exc))
        return None


def _item_label(section: str, index: int, raw: Any) -> str:
    label = f"{section}[{index}]"
    if isinstance(raw, dict) and "id" in raw:
        label += f" (id {raw['id']})"
    elif isinstance(raw, dict) and "name" in raw:
        label += f" ({raw['name']})"
    return label


def _field_path(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _model_problems(exc: ValidationError, file: Path, label: str) -> list[BenchmarkError]:
    out = []
    for err in exc.errors():
        if err["type"] == "extra_forbidden":
            message, expected = "unknown key", "only the documented keys"
        elif err["type"] == "missing":
            message, expected = "required field is missing", None
        else:
            message, expected = err["msg"], None
        sub = _field_path(tuple(err["loc"]))
        field = f"{label}.{sub}" if label and sub else (label or sub)
        out.append(BenchmarkError(message, file=file, field=field or None, expected=expected))
    return out


def _schema_problems(tool: ToolSpec, file: Path) -> list[BenchmarkError]:
    """A tool's ``parameters`` checked against the JSON Schema meta-schema (Draft 2020-12)."""
    try:
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
    except jsonschema.SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path)
        detail = f"{exc.message}" + (f" at {where}" if where else "")
        return [
            BenchmarkError(
                f"tool {tool.name!r}: parameters is not a valid JSON Schema: {detail}",
                file=file,
                field=f"tools.{tool.name}.parameters",
                expected="a JSON Schema object (Draft 2020-12)",
            )
        ]
    return []


def _list_section(
    data: Any, file: Path, key: str, problems: list[BenchmarkError], *, required: bool = False
) -> list[Any]:
    if data is None:
        if required and file.is_file():
            problems.append(
                BenchmarkError("file is empty", file=file, expected=f"{key}: a list of {key}")
            )
        return []
    if not isinstance(data, dict) or set(data) != {key} or not isinstance(data[key], list):
        problems.append(
            BenchmarkError(
                "wrong shape", file=file, expected=f"a mapping with one key {key!r}: a list"
            )
        )
        return []
    if required and not data[key]:
        problems.append(BenchmarkError(f"no {key}", file=file, field=key, expected="at least one"))
    return data[key]


def _prompt_problems(header: dict[str, Any], file: Path) -> list[BenchmarkError]:
    """Placeholders of the system prompt template that voxbench would not fill in."""
    prompt = header.get("system_prompt")
    if not isinstance(prompt, str):
        return []
    return [
        BenchmarkError(
            f"unknown template variable {{{name}}}",
            file=file,
            field="system_prompt",
            expected=", ".join(f"{{{v}}}" for v in PROMPT_VARIABLES),
        )
        for name in dict.fromkeys(_PLACEHOLDER.findall(prompt))
        if name not in PROMPT_VARIABLES
    ]


def _load(root: Path) -> tuple[Benchmark | None, list[BenchmarkError]]:
    problems: list[BenchmarkError] = []
    known = len(problems)
    header = _read_yaml(root / "benchmark.yaml", problems)
    if header is None and len(problems) == known:
        problems.append(
            BenchmarkError(
                "file is empty",
                file=root / "benchmark.yaml",
                expected="a mapping with id, version, description, system_prompt",
            )
        )
    knowledge_base = _read_text(root / "knowledge_base.md", problems)
    tools_file, turns_file, backend_file = (
        root / "tools.yaml",
        root / "turns.yaml",
        root / "backend.yaml",
    )
    raw_tools = _list_section(_read_yaml(tools_file, problems), tools_file, "tools", problems)
    raw_turns = _list_section(
        _read_yaml(turns_file, problems), turns_file, "turns", problems, required=True
    )
    raw_backend = _read_yaml(backend_file, problems) or {}

    if header is not None and not isinstance(header, dict):
        problems.append(
            BenchmarkError("wrong shape", file=root / "benchmark.yaml", expected="a mapping")
        )
        header = None
    if isinstance(header, dict):
        for key in sorted(set(header) - _HEADER_KEYS):
            problems.append(
                BenchmarkError(
                    "unknown key",
                    file=root / "benchmark.yaml",
                    field=key,
                    expected=", ".join(sorted(_HEADER_KEYS)),
                )
            )
        problems += _prompt_problems(header, root / "benchmark.yaml")

    tools: list[ToolSpec] = []
    for i, raw in enumerate(raw_tools):
        try:
            tools.append(ToolSpec.model_validate(raw))
        except ValidationError as exc:
            problems += _model_problems(exc, tools_file, _item_label("tools", i, raw))
            continue
        problems += _schema_problems(tools[-1], tools_file)
    for name, count in Counter(t.name for t in tools).items():
        if count > 1:
            problems.append(
                BenchmarkError(f"duplicate tool name {name!r}", file=tools_file, field="tools")
            )

    turns: list[Turn] = []
    for i, raw in enumerate(raw_turns):
        try:
            turns.append(Turn.model_validate(raw))
        except ValidationError as exc:
            problems += _model_problems(exc, turns_file, _item_label("turns", i, raw))
    for turn_id, count in Counter(t.id for t in turns).items():
        if count > 1:
            problems.append(
                BenchmarkError(f"duplicate turn id {turn_id!r}", file=turns_file, field="turns")
            )

    backend: BackendSpec | None = None
    try:
        backend = BackendSpec.model_validate(raw_backend)
    except ValidationError as exc:
        problems += _model_problems(exc, backend_file, "")

    # Names of tools that failed validation still count as declared, so one bad tool gives
    # one error instead of one per reference to it.
    declared = {
        raw["name"]
        for raw in raw_tools
        if isinstance(raw, dict) and isinstance(raw.get("name"), str)
    }
    if turns or backend is not None:
        problems += _check_calls(root, tools, declared, turns, backend)
    for i, turn in enumerate(turns):
        if turn.audio is not None and not (root / turn.audio).is_file():
            problems.append(
                BenchmarkError(
                    f"audio file not found: {root / turn.audio}",
                    file=turns_file,
                    field=f"turns[{i}] (id {turn.id}).audio",
                )
            )

    if problems or header is None or knowledge_base is None:
        return None, problems
    try:
        benchmark = Benchmark.model_validate(
            {
                **header,
                "knowledge_base": knowledge_base,
                "tools": tools,
                "turns": turns,
                "backend": raw_backend,
                "root": root,
            }
        )
    except ValidationError as exc:
        return None, _model_problems(exc, root / "benchmark.yaml", "")
    try:
        benchmark.render_system_prompt()
    except ValueError as exc:
        return None, [
            BenchmarkError(
                str(exc),
                file=root / "benchmark.yaml",
                field="current_date",
                expected="an ISO date YYYY-MM-DD",
            )
        ]
    return benchmark, []


def _check_calls(
    root: Path,
    tools: list[ToolSpec],
    declared: set[str],
    turns: list[Turn],
    backend: BackendSpec | None,
) -> list[BenchmarkError]:
    problems: list[BenchmarkError] = []
    by_name = {t.name: t for t in tools}
    turns_file = root / "turns.yaml"
    for i, turn in enumerate(turns):
        label = f"turns[{i}] (id {turn.id}).expect"
        groups: list[tuple[str, tuple[ExpectedCall, ...]]] = [
            ("required_calls", turn.expect.required_calls),
            ("allowed_calls", turn.expect.allowed_calls),
            ("forbidden_calls", turn.expect.forbidden_calls),
        ]
        for group, calls in groups:
            for j, call in enumerate(calls):
                field = f"{label}.{group}[{j}]"
                tool = by_name.get(call.name)
                if tool is None and call.name in declared:
                    continue  # the tool itself is invalid: reported once, in tools.yaml
                if tool is None:
                    problems.append(
                        BenchmarkError(
                            f"call to undefined tool {call.name!r}",
                            file=turns_file,
                            field=f"{field}.name",
                            expected=f"one of {', '.join(sorted(declared))}",
                        )
                    )
                    continue
                props = tool.parameters.get("properties", {})
                for arg in call.args:
                    if arg not in props:
                        problems.append(
                            BenchmarkError(
                                f"{call.name} has no parameter {arg!r}",
                                file=turns_file,
                                field=f"{field}.args.{arg}",
                            )
                        )
                if group == "required_calls":
                    for arg in tool.required:
                        if arg not in call.args:
                            problems.append(
                                BenchmarkError(
                                    f"golden call lacks required argument {arg!r}",
                                    file=turns_file,
                                    field=f"{field}.args",
                                )
                            )
                    if call.args and not args_match(call, call.args):
                        problems.append(
                            BenchmarkError(
                                "golden arguments do not satisfy their own matchers",
                                file=turns_file,
                                field=f"{field}.match",
                            )
                        )
    if backend is not None:
        backend_file = root / "backend.yaml"
        for name in backend.tools:
            if name not in declared:
                problems.append(
                    BenchmarkError(
                        f"binding for undefined tool {name!r}",
                        file=backend_file,
                        field=f"tools.{name}",
                    )
                )
        for k, fault in enumerate(backend.faults):
            if fault.tool not in declared:
                problems.append(
                    BenchmarkError(
                        f"fault for undefined tool {fault.tool!r}",
                        file=backend_file,
                        field=f"faults[{k}].tool",
                    )
                )
        turn_ids = {t.id for t in turns}
        for turn_id in backend.canned:
            if turns and turn_id not in turn_ids:
                problems.append(
                    BenchmarkError(
                        f"canned results for unknown turn {turn_id!r}",
                        file=backend_file,
                        field=f"canned.{turn_id}",
                    )
                )
    return problems
