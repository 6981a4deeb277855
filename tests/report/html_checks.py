"""Reading a rendered HTML report back: its links, players and elements (``html.parser``)."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


@dataclass
class Element:
    tag: str
    attrs: dict[str, str]
    text: str = ""


class ParsedPage(HTMLParser):
    """Every element of a page, with the text inside it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[Element] = []
        self.scripts: list[str] = []
        self._open: list[Element] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.elements.append(element)
        self._in_script = tag == "script"
        if tag not in ("br", "meta", "input", "img", "link", "source"):
            self._open.append(element)

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i].tag == tag:
                del self._open[i:]
                break

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)
        for element in self._open:
            element.text += data

    def find(self, tag: str, **attrs: str) -> list[Element]:
        """Elements with this tag whose attributes contain ``attrs`` (``class_`` for class)."""
        out = []
        for e in self.elements:
            if e.tag == tag and all(_matches(e, k, v) for k, v in attrs.items()):
                out.append(e)
        return out


def _matches(element: Element, key: str, value: str) -> bool:
    key = key.rstrip("_").replace("_", "-")
    have = element.attrs.get(key)
    if have is None:
        return False
    return value in have.split() if key == "class" else have == value


def parse(text: str) -> ParsedPage:
    page = ParsedPage()
    page.feed(text)
    page.close()
    return page


def links(page: ParsedPage) -> list[str]:
    """Every ``src`` and ``href`` of the page."""
    return [e.attrs[k] for e in page.elements for k in ("src", "href") if k in e.attrs]


def external_links(page: ParsedPage) -> list[str]:
    """Links that would reach outside the page's folder: a scheme other than ``data:``, or a
    host (``//cdn...``)."""
    out = []
    for link in links(page):
        parts = urlsplit(link)
        if (parts.scheme and parts.scheme != "data") or parts.netloc:
            out.append(link)
    return out


def player_files(page: ParsedPage, base: Path) -> list[Path]:
    """The files the page's audio players link to, resolved from ``base``."""
    return [
        base / unquote(urlsplit(e.attrs["src"]).path)
        for e in page.find("audio")
        if not e.attrs["src"].startswith("data:")
    ]
