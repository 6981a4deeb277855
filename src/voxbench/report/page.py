"""The HTML page machinery shared by every report: one Jinja2 environment, autoescaping on,
secrets redacted from every value written into a page, the stylesheet and script inlined.

A page is one self-contained file: no CDN, no external stylesheet, script, font or image.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any

import jinja2
from markupsafe import Markup

from voxbench.core.secrets import redact_text

TEMPLATES = files("voxbench.report") / "templates"


def _finalize(value: Any) -> Any:
    # Every ``{{ value }}`` passes here before escaping: text from a run (a transcript, a tool
    # result, a judge's reasoning) has its secrets redacted. Markup was built by the report
    # itself (plots, audio links) and is left alone: redacting base64 audio could corrupt it.
    if isinstance(value, str) and not isinstance(value, Markup):
        return redact_text(value)
    return value


def _pct(rate: float | None, digits: int = 1) -> str:
    return "—" if rate is None else f"{rate * 100:.{digits}f}%"


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.0f}"


def _secs(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds:.2f} s"


@cache
def environment() -> jinja2.Environment:
    """The report templates, with autoescaping and the report filters."""
    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(_load),
        autoescape=True,
        finalize=_finalize,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=_pct, ms=_ms, secs=_secs)
    env.globals.update(
        stylesheet=Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
        script=Markup((TEMPLATES / "report.js").read_text(encoding="utf-8")),
    )
    return env


def _load(name: str) -> str | None:
    file = TEMPLATES / name
    return file.read_text(encoding="utf-8") if file.is_file() else None


def render_page(template: str, **context: Any) -> str:
    """Render ``template`` (a file under ``report/templates``) into a whole HTML document."""
    return environment().get_template(template).render(**context)
