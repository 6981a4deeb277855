"""Listings (``voxbench list ...``, ``voxbench tasks list``): one table, three ways to print it.

A ``Listing`` holds its rows as JSON values. ``print_listings`` prints them

- as JSON on stdout with ``--json`` (one listing: an array of objects; several: an object
  of arrays keyed by each listing's ``key``);
- as a Rich table on a terminal wide enough for every word of every cell;
- otherwise as plain text that no one wraps: aligned columns, one row per line, when stdout
  is a pipe or a file (``grep``-able); one block per row in a terminal too narrow for the table.

A name (``openai-realtime``, ``AZURE_OPENAI_API_KEY``) is never cut across two lines.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table

from voxbench.cli.console import make_console

NONE = "—"


@dataclass(frozen=True)
class Column:
    """A column: the row key it shows and its header."""

    key: str
    header: str = ""
    name: bool = False
    """Holds names: never wrapped in a table, even between words."""

    @property
    def title(self) -> str:
        return self.header or self.key.replace("_", " ")


@dataclass
class Listing:
    """Rows of JSON values under a title."""

    key: str
    title: str
    columns: Sequence[Column]
    rows: list[dict[str, Any]] = field(default_factory=list)

    def add(self, **row: Any) -> None:
        self.rows.append(row)


def cell_text(value: Any) -> str:
    """A JSON value as one cell: lists joined with commas, nothing as a dash."""
    if value is None or value == "" or value == []:
        return NONE
    if isinstance(value, list | tuple):
        return ", ".join(cell_text(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def listings_json(listings: Sequence[Listing]) -> str:
    """The JSON document ``--json`` prints."""
    if len(listings) == 1:
        data: Any = listings[0].rows
    else:
        data = {listing.key: listing.rows for listing in listings}
    return json.dumps(data, indent=2, ensure_ascii=False)


def print_listings(
    listings: Sequence[Listing], *, as_json: bool = False, console: Console | None = None
) -> None:
    """Print ``listings`` as JSON, a table, aligned lines or blocks (see the module doc)."""
    console = console or make_console()
    if as_json:
        console.print(listings_json(listings), markup=False, highlight=False, soft_wrap=True)
        return
    for i, listing in enumerate(listings):
        if i:
            _line(console, "")
        if console.is_terminal and table_width(listing) <= console.width:
            console.print(rich_table(listing, console.width))
        elif console.is_terminal:
            _print_blocks(listing, console)
        else:
            _print_columns(listing, console)


def _min_widths(listing: Listing) -> list[int]:
    # A name column is as wide as its longest cell; another as its longest word.
    widths = []
    for column in listing.columns:
        texts = [column.title] + [cell_text(row.get(column.key)) for row in listing.rows]
        if column.name:
            widths.append(max(cell_len(t) for t in texts))
        else:
            widths.append(max(cell_len(word) for t in texts for word in t.split() or [""]))
    return widths


def table_width(listing: Listing) -> int:
    """The narrowest the table can be with every word whole (borders and padding included)."""
    return sum(_min_widths(listing)) + 3 * len(listing.columns) + 1


def _natural_widths(listing: Listing) -> list[int]:
    return [
        max(cell_len(t) for t in [c.title] + [cell_text(row.get(c.key)) for row in listing.rows])
        for c in listing.columns
    ]


def column_widths(listing: Listing, width: int) -> list[int]:
    """Widths that fit ``width``: no column narrower than its longest word (or name), the
    room left shared in proportion to what each column would need to hold its longest cell."""
    least, most = _min_widths(listing), _natural_widths(listing)
    room = width - table_width(listing)
    want = [m - n for m, n in zip(most, least, strict=True)]
    if room >= sum(want):
        return most
    shares = [room * w // max(1, sum(want)) for w in want]
    return [n + s for n, s in zip(least, shares, strict=True)]


def rich_table(listing: Listing, width: int) -> Table:
    """The Rich table of a listing at most ``width`` wide (``table_width`` at least)."""
    table = Table(title=escape(listing.title), title_justify="left")
    for column, w in zip(listing.columns, column_widths(listing, width), strict=True):
        table.add_column(column.title, no_wrap=column.name, overflow="fold", width=w)
    for row in listing.rows:
        table.add_row(*(escape(cell_text(row.get(c.key))) for c in listing.columns))
    return table


def _line(console: Console, text: str) -> None:
    # soft_wrap: the line is written as it is, never cut at the console's width.
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _print_columns(listing: Listing, console: Console) -> None:
    cells = [[c.title for c in listing.columns]]
    cells += [[cell_text(row.get(c.key)) for c in listing.columns] for row in listing.rows]
    widths = [max(cell_len(r[i]) for r in cells) for i in range(len(listing.columns))]
    _line(console, listing.title)
    for r in cells:
        padded = (text + " " * (w - cell_len(text)) for text, w in zip(r, widths, strict=True))
        _line(console, "  ".join(padded).rstrip())


def _print_blocks(listing: Listing, console: Console) -> None:
    _line(console, listing.title)
    first, *rest = listing.columns
    for row in listing.rows:
        _line(console, cell_text(row.get(first.key)))
        for column in rest:
            _line(console, f"  {column.title}: {cell_text(row.get(column.key))}")


def print_table(console: Console, table: Table) -> None:
    """A Rich table on a terminal as Rich fits it; into a pipe or a file at its natural width,
    so no name or sentence is folded across lines (``grep`` finds every row whole)."""
    if console.is_terminal:
        console.print(table)
        return
    natural = Measurement.get(console, console.options.update_width(100_000), table).maximum
    width = console.width  # print(width=) is capped at the console's own width
    console.width = max(width, natural)
    try:
        console.print(table, crop=False)
    finally:
        console.width = width
