"""Read an upstream ``system.py`` into a system-prompt template, without running it.

``system_instruction`` is usually ``_PREAMBLE + _load_knowledge_base() + _TOOLS_SECTION``:
string constants (or f-strings of constants) joined with ``+`` around a call that reads
``data/knowledge_base.txt``. The constants are read, the loader call is recognised (never
made) and becomes voxbench's ``{knowledge_base}`` placeholder; the date the preamble fixes
("Today is June 2, 2025.") becomes the benchmark's ``current_date``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from datetime import date

from voxbench.importers.pyliteral import PyModule, call_name, describe_node

SYSTEM_PROMPT_NAMES = ("system_instruction", "SYSTEM_INSTRUCTION", "system_prompt", "SYSTEM_PROMPT")
_KB_MARK = "\x00knowledge-base\x00"


@dataclass
class SystemPrompt:
    """A system-prompt template and what the reader noticed on the way."""

    template: str
    notes: list[str] = field(default_factory=list)


def read_system_prompt(module: PyModule, knowledge_base: str) -> SystemPrompt:
    """The system prompt as a template with ``{knowledge_base}`` where the KB is loaded."""
    name = next((n for n in SYSTEM_PROMPT_NAMES if module.binding(n) is not None), None)
    if name is None:
        raise module.error(
            f"no top-level assignment to `{SYSTEM_PROMPT_NAMES[0]}`",
            expected=f"one of {', '.join(SYSTEM_PROMPT_NAMES)} assigned a string",
        )

    def knowledge_base_loader(node: ast.AST) -> str:
        if isinstance(node, ast.Call) and _loads_knowledge_base(module, node):
            return _KB_MARK
        raise module.error(
            f"cannot read {describe_node(node)} in `{name}` without running code",
            node,
            expected="string constants, f-strings of constants, + concatenation and the "
            "knowledge-base loader; pass --system-prompt FILE to supply the prompt yourself",
        )

    text = module.evaluate(module.require_binding(name), knowledge_base_loader)
    if not isinstance(text, str):
        raise module.error(f"`{name}` is not a string")
    notes: list[str] = []
    for placeholder in ("{knowledge_base}", "{current_date}", "{tools}"):
        if placeholder in text.replace(_KB_MARK, ""):
            notes.append(
                f"{module.label}: the prompt text contains {placeholder} literally; voxbench fills it in"
            )
    return SystemPrompt(template=place_knowledge_base(text, knowledge_base, notes), notes=notes)


def place_knowledge_base(text: str, knowledge_base: str, notes: list[str]) -> str:
    """Replace the loader mark with ``{knowledge_base}``, keeping the KB's own edge whitespace.

    voxbench strips the knowledge base when it fills the placeholder, so the newlines the KB
    file began and ended with are kept in the template.
    """
    stripped = knowledge_base.strip()
    lead = knowledge_base[: len(knowledge_base) - len(knowledge_base.lstrip())]
    trail = knowledge_base[len(knowledge_base.rstrip()) :] if stripped else ""
    slot = lead + "{knowledge_base}" + trail
    if _KB_MARK not in text:
        notes.append(
            "the system prompt does not load the knowledge base; it was appended at the end"
        )
        return text.rstrip() + "\n\n{knowledge_base}\n"
    return text.replace(_KB_MARK, slot)


def _loads_knowledge_base(module: PyModule, call: ast.Call) -> bool:
    # The loader is recognised by what it reads (a path naming knowledge_base) or its name;
    # it is never called.
    def mentions_kb(node: ast.AST) -> bool:
        return any(
            isinstance(n, ast.Constant) and isinstance(n.value, str) and "knowledge_base" in n.value
            for n in ast.walk(node)
        )

    name = call_name(call)
    if "knowledge" in name.lower() or mentions_kb(call):
        return True
    func = module.functions.get(name) if isinstance(call.func, ast.Name) else None
    return func is not None and mentions_kb(func)


_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
_MONTH = r"(?P<month>" + "|".join(m.capitalize() for m in _MONTHS) + r")"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_WEEKDAY = r"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day,?\s+)?"
_DATE_FORMS = (
    rf"{_WEEKDAY}{_MONTH}\s+{_DAY},?\s+{_YEAR}",
    rf"{_WEEKDAY}{_DAY}\s+{_MONTH},?\s+{_YEAR}",
    r"(?P<iso>\d{4}-\d{2}-\d{2})",
)
_DATE_LEAD = r"(?:today\s+is|today's\s+date\s+is|current\s+date\s*(?:is|:)|the\s+date\s+is)\s*:?\s*"


def find_current_date(prompt: str) -> date | None:
    """The conversation date a prompt fixes ("Today is June 2, 2025."), if it states one."""
    for form in _DATE_FORMS:
        m = re.search(_DATE_LEAD + form, prompt, re.IGNORECASE)
        if m is None:
            continue
        try:
            if m.groupdict().get("iso"):
                return date.fromisoformat(m.group("iso"))
            month = _MONTHS.index(m.group("month").lower()) + 1
            return date(int(m.group("year")), month, int(m.group("day")))
        except ValueError:
            continue
    return None


__all__ = ["SystemPrompt", "find_current_date", "place_knowledge_base", "read_system_prompt"]
