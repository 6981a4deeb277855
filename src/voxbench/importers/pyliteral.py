"""Read data out of Python source files without running them.

Upstream benchmarks keep their data in ``.py`` files. Importing those modules would run
arbitrary code from a checkout we do not control, so instead we parse them with ``ast`` and
evaluate only what is plain data: constants, lists, tuples, dicts and sets; ``+`` between
strings or lists; f-strings whose parts are themselves readable; and names bound at module
level to such values. Anything else (a call, an attribute, a comprehension) is refused
with the file, the line and what was found.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from voxbench.core.errors import ConfigError


class UpstreamFormatError(ConfigError):
    """An upstream benchmark file is not in the shape the importer can read."""


Hook = Callable[[ast.AST], Any]
"""Called for a node the evaluator cannot read; returns a stand-in value or raises."""


def describe_node(node: ast.AST) -> str:
    """A short human description of an expression: "a function call `os.system(...)`"."""
    if isinstance(node, ast.Call):
        return f"a function call `{_dotted(node.func)}(...)`"
    if isinstance(node, ast.Attribute):
        return f"an attribute access `{_dotted(node)}`"
    if isinstance(node, ast.Name):
        return f"the name `{node.id}`"
    if isinstance(node, ast.ListComp | ast.DictComp | ast.SetComp | ast.GeneratorExp):
        return "a comprehension"
    if isinstance(node, ast.Lambda):
        return "a lambda"
    if isinstance(node, ast.Subscript):
        return f"a subscript `{_dotted(node.value)}[...]`"
    return f"a `{type(node).__name__}` expression"


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return f"{_dotted(node.func)}(...)"
    return "..."


def call_name(node: ast.Call) -> str:
    """The last part of a called name: ``FunctionSchema`` for ``schemas.FunctionSchema(...)``."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


class PyModule:
    """A parsed Python file whose module-level data can be read without executing it."""

    def __init__(self, path: Path, label: str | None = None) -> None:
        self.path = path
        self.label = label or str(path)
        try:
            source = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise UpstreamFormatError(f"cannot read the file: {exc}", file=self.label) from exc
        except UnicodeDecodeError as exc:
            raise UpstreamFormatError("not UTF-8 text", file=self.label) from exc
        try:
            self.tree = ast.parse(source, filename=str(path))
        except SyntaxError as exc:
            raise UpstreamFormatError(
                f"not valid Python: {exc.msg}", file=self.label, field=f"line {exc.lineno}"
            ) from exc
        self._bindings: dict[str, ast.expr] = {}
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        for stmt in self.tree.body:
            if isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self._bindings[target.id] = stmt.value
            elif (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
            ):
                self._bindings[stmt.target.id] = stmt.value
            elif isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[stmt.name] = stmt

    # -- errors ------------------------------------------------------------------------

    def error(
        self, message: str, node: ast.AST | None = None, expected: str | None = None
    ) -> UpstreamFormatError:
        """An ``UpstreamFormatError`` located at ``node``'s line."""
        line = getattr(node, "lineno", None)
        return UpstreamFormatError(
            message, file=self.label, field=f"line {line}" if line else None, expected=expected
        )

    # -- module-level names ------------------------------------------------------------

    def binding(self, name: str) -> ast.expr | None:
        """The expression last assigned to ``name`` at module level, if any."""
        return self._bindings.get(name)

    def names(self) -> list[str]:
        """Every name assigned at module level."""
        return list(self._bindings)

    def require_binding(self, name: str) -> ast.expr:
        """Like ``binding``, but a missing name is an error naming the file."""
        node = self._bindings.get(name)
        if node is None:
            raise UpstreamFormatError(f"no top-level assignment to `{name}`", file=self.label)
        self._refuse_mutation(name)
        return node

    def _refuse_mutation(self, name: str) -> None:
        # `turns += [...]`, `turns.append(...)` or `turns[0] = ...` at module level would
        # change the value after its assignment; reading only the assignment would be wrong.
        for stmt in self.tree.body:
            target: ast.AST | None = None
            if isinstance(stmt, ast.AugAssign):
                target = stmt.target
            elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
                func = stmt.value.func
                target = func.value if isinstance(func, ast.Attribute) else None
            elif isinstance(stmt, ast.Assign):
                target = next((t for t in stmt.targets if isinstance(t, ast.Subscript)), None)
            while isinstance(target, ast.Subscript | ast.Attribute):
                target = target.value
            if isinstance(target, ast.Name) and target.id == name:
                raise self.error(
                    f"`{name}` is modified after its assignment, which cannot be read "
                    "without running the file",
                    stmt,
                    expected=f"one plain assignment `{name} = [...]`",
                )

    def value_of(self, name: str, hook: Hook | None = None) -> Any:
        """The value assigned to ``name`` at module level, read without executing anything."""
        return self.evaluate(self.require_binding(name), hook)

    # -- evaluation --------------------------------------------------------------------

    def evaluate(self, node: ast.AST, hook: Hook | None = None) -> Any:
        """Evaluate a data expression; refuse anything that would need running code."""
        return _Evaluator(self, hook).eval(node)

    def calls_named(self, name: str) -> Iterator[ast.Call]:
        """Every call to ``name`` (or ``x.name``) anywhere in the file, in source order."""
        found = [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and call_name(n) == name]
        yield from sorted(found, key=lambda n: (n.lineno, n.col_offset))


class _Evaluator:
    def __init__(self, module: PyModule, hook: Hook | None) -> None:
        self.module = module
        self.hook = hook
        self.resolving: list[str] = []

    def eval(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List):
            return [self.eval(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(self.eval(e) for e in node.elts)
        if isinstance(node, ast.Set):
            return {self.eval(e) for e in node.elts}
        if isinstance(node, ast.Dict):
            return self._dict(node)
        if isinstance(node, ast.Name):
            return self._name(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._add(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            value = self.eval(node.operand)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return -value if isinstance(node.op, ast.USub) else value
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node)
        if self.hook is not None:
            return self.hook(node)
        raise self.module.error(
            f"cannot read {describe_node(node)} without running code",
            node,
            expected="plain data: strings, numbers, lists, dicts, None",
        )

    def _dict(self, node: ast.Dict) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:  # {**other}
                spread = self.eval(value)
                if not isinstance(spread, dict):
                    raise self.module.error("`**` of something that is not a dict", value)
                out.update(spread)
                continue
            k = self.eval(key)
            try:
                hash(k)
            except TypeError as exc:
                raise self.module.error("a dict key that is not hashable", key) from exc
            out[k] = self.eval(value)
        return out

    def _name(self, node: ast.Name) -> Any:
        bound = self.module.binding(node.id)
        if bound is None or node.id in self.resolving:
            if self.hook is not None:
                return self.hook(node)
            why = "refers to itself" if bound is not None else "is not assigned at module level"
            raise self.module.error(f"the name `{node.id}` {why}", node)
        self.resolving.append(node.id)
        try:
            return self.eval(bound)
        finally:
            self.resolving.pop()

    def _add(self, node: ast.BinOp) -> Any:
        left, right = self.eval(node.left), self.eval(node.right)
        if type(left) is type(right) and isinstance(left, str | list | tuple | int | float):
            return left + right
        raise self.module.error(
            f"cannot add {type(left).__name__} and {type(right).__name__}", node
        )

    def _fstring(self, node: ast.JoinedStr) -> str:
        parts: list[str] = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
                continue
            assert isinstance(part, ast.FormattedValue)
            value = self.eval(part.value)
            spec = ""
            if part.format_spec is not None:
                assert isinstance(part.format_spec, ast.JoinedStr)  # how Python parses a spec
                spec = self._fstring(part.format_spec)
            if part.conversion == ord("r"):
                value = repr(value)
            elif part.conversion == ord("a"):
                value = ascii(value)
            if not isinstance(value, str | int | float):
                raise self.module.error(
                    f"an f-string part of type {type(value).__name__}", part.value
                )
            try:
                parts.append(format(value, spec))
            except (TypeError, ValueError) as exc:
                raise self.module.error(f"f-string format `{spec}`: {exc}", part) from exc
        return "".join(parts)


__all__ = ["PyModule", "UpstreamFormatError", "call_name", "describe_node"]
