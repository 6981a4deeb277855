"""The one way voxbench reads a YAML file: safe, UTF-8, no key given twice, errors that point.

PyYAML keeps the last of two equal keys without a word; one run switched to audio mode
that way. Every YAML file voxbench reads (run configs, eval configs, task specs, matrix
plans, benchmark packages, rubrics, fake-server scripts) goes through ``read_yaml`` /
``parse_yaml``, which refuse a repeated key naming its line.

Configs then go through ``substitute_env`` (``${NAME}`` / ``${NAME:-default}``) and
``validate``: a pydantic ``ValidationError`` becomes one ``ConfigError`` naming the file, the
dotted path of every bad key (``models[0].max_concurency``) and, for an unknown key, the keys
allowed there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from yaml.nodes import MappingNode

from voxbench.core.errors import ConfigError


class DuplicateKeyError(yaml.YAMLError):
    """A mapping gives the same key twice."""

    def __init__(self, key: str, line: int, first_line: int) -> None:
        self.key = key
        self.line = line
        self.first_line = first_line
        super().__init__(f"duplicate key {key!r} at line {line} (first given at line {first_line})")


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # ``<<: *anchor`` merges; its keys may be overridden on purpose
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # an unhashable key: the base constructor reports it
            line = key_node.start_mark.line + 1
            if first is not None:
                raise DuplicateKeyError(str(key), line, first)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, *, source: str | Path | None = None, what: str = "YAML") -> Any:
    """Parse YAML ``text`` safely; any problem is a ``ConfigError`` naming ``source``."""
    try:
        data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
        cycle = _recursive_alias(data)
        if cycle is not None:
            raise ConfigError(
                f"not valid {what}: an alias refers to the node that holds it ({cycle})",
                file=source,
                expected="anchors (&a) used only outside their own node",
            )
        return data
    except DuplicateKeyError as exc:
        raise ConfigError(
            f"key given twice: line {exc.line} repeats line {exc.first_line}",
            file=source,
            field=exc.key,
            expected="each key once",
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid {what}: {exc}", file=source) from None
    except (ValueError, TypeError, OverflowError) as exc:
        # The safe constructors raise these for values such as the date 2020-13-01.
        raise ConfigError(f"not valid {what}: {exc}", file=source) from None
    except RecursionError:
        raise ConfigError(f"not valid {what}: nested too deeply", file=source) from None


def _recursive_alias(data: Any) -> str | None:
    """Where a loaded document contains itself (``x: &a [*a]``), as a dotted path; None when
    it is a tree (an anchor reused elsewhere is fine). Every reader would otherwise recurse
    without end."""
    on_path: set[int] = set()
    done: set[int] = set()  # explored once: a node reused by many aliases is walked once
    stack: list[tuple[Any, str, bool]] = [(data, "", False)]
    while stack:
        node, where, leaving = stack.pop()
        if leaving:
            on_path.discard(id(node))
            done.add(id(node))
            continue
        if not isinstance(node, dict | list) or id(node) in done:
            continue
        if id(node) in on_path:
            return where or "the document"
        on_path.add(id(node))
        stack.append((node, where, True))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            label = f"{where}[{key}]" if isinstance(node, list) else f"{where}.{key}".lstrip(".")
            stack.append((child, label, False))
    return None


def read_text_file(path: str | Path) -> str:
    """A file's UTF-8 text; a missing, unreadable or non-UTF-8 file is a ``ConfigError``."""
    p = Path(path)
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset {exc.start})",
            file=p,
            expected="a UTF-8 text file",
        ) from None
    except IsADirectoryError:
        raise ConfigError("is a directory", file=p, expected="a file") from None
    except FileNotFoundError:
        raise ConfigError("file not found", file=p) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=p) from None


def read_yaml(path: str | Path, *, what: str = "YAML") -> Any:
    """Read and parse a YAML file (see ``parse_yaml``)."""
    return parse_yaml(read_text_file(path), source=Path(path), what=what)


# -- configs: environment variables and validation -------------------------------------

M = TypeVar("M", bound=BaseModel)

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def substitute_env(data: Any, *, file: Path | None = None, path: str = "") -> Any:
    """Replace ``${NAME}`` (or ``${NAME:-default}``) in every string with the environment's value.

    An unset variable without a default is an error naming the key: silently sending the
    literal ``${OPENAI_API_KEY}`` as a key is how AU-Harness hides a typo.
    """
    if isinstance(data, dict):
        return {k: substitute_env(v, file=file, path=_join(path, str(k))) for k, v in data.items()}
    if isinstance(data, list):
        return [substitute_env(v, file=file, path=f"{path}[{i}]") for i, v in enumerate(data)]
    if not isinstance(data, str):
        return data

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = os.environ.get(name)
        if found is not None:
            return found
        if default is not None:
            return default
        raise ConfigError(
            f"environment variable {name} is not set",
            file=file,
            field=path or None,
            expected=f"{name} in the environment or .env, or ${{{name}:-default}}",
        )

    return _ENV.sub(value, data)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def loc_path(loc: tuple[Any, ...]) -> str:
    """``("models", 0, "name")`` → ``models[0].name``."""
    out = ""
    for part in loc:
        out = f"{out}[{part}]" if isinstance(part, int) else _join(out, str(part))
    return out


def allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str] | None:
    """The field names of the model found at ``loc`` inside ``model`` (None if not a model)."""
    current: Any = model
    for part in loc:
        current = _model_of(current)
        if current is None:
            return None
        if isinstance(part, int):
            continue
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = field.annotation
    current = _model_of(current)
    return sorted(current.model_fields) if current is not None else None


def _model_of(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (``list[M]``, ``M | None``, ``M | str``)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    origin = get_origin(annotation)
    if origin is None:
        return None
    if origin is Union or str(origin) == "<class 'types.UnionType'>" or origin in (list, tuple):
        for arg in get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
    if origin is dict:
        args = get_args(annotation)
        return _model_of(args[1]) if len(args) == 2 else None
    return None


def validate(model: type[M], data: Any, *, file: Path | str | None, what: str) -> M:
    """``model`` from ``data``, or a ``ConfigError`` listing every problem with its key path."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{what} must be a mapping of keys", file=file)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise config_error(exc, model, file=file, what=what) from None


def config_error(
    exc: ValidationError, model: type[BaseModel], *, file: Path | str | None, what: str
) -> ConfigError:
    """One ``ConfigError`` describing each error of ``exc`` by its key path."""
    problems: list[str] = []
    first_field: str | None = None
    for error in exc.errors():
        loc = tuple(p for p in error["loc"] if not _is_union_tag(p))
        path = loc_path(loc) or "(top level)"
        first_field = first_field or path
        if error["type"] == "extra_forbidden":
            allowed = allowed_keys(model, loc[:-1])
            where = loc_path(loc[:-1]) or "the top level"
            hint = f"; allowed at {where}: {', '.join(allowed)}" if allowed else ""
            problems.append(f"{path}: unknown key{hint}")
        else:
            problems.append(f"{path}: {error['msg']}")
    message = f"invalid {what}: " + "; ".join(problems)
    return ConfigError(message, file=file)


def _is_union_tag(part: Any) -> bool:
    # pydantic puts the union member's name in the loc ("list[str]", "TaskSelection", "str").
    return isinstance(part, str) and (
        part[:1].isupper() or "[" in part or part in ("str", "int", "float", "bool")
    )
