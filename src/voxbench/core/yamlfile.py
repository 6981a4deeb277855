"""The one way voxbench reads a YAML file: safe, UTF-8, and no key given twice.

PyYAML keeps the last of two equal keys without a word; one run switched to audio mode
that way. Every YAML file voxbench reads (run configs, benchmark packages, fake-server
scripts) goes through ``read_yaml``, which refuses a repeated key naming its line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
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
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
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
