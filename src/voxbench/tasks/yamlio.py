"""Reading user YAML into pydantic models: ``${ENV}`` substitution and errors that point.

A pydantic ``ValidationError`` becomes one ``ConfigError`` naming the file, the dotted path of
every bad key (``models[0].max_concurency``) and, for an unknown key, the keys allowed there.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError

from voxbench.core.errors import ConfigError

M = TypeVar("M", bound=BaseModel)

_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def read_yaml(path: Path) -> Any:
    """The YAML document in ``path``; a ``ConfigError`` naming the file when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror or exc}", file=path) from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"not valid YAML: {exc}", file=path) from exc


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
