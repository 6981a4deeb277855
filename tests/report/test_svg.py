"""The report's inline SVG plots: what they draw, and that text in them stays text."""

from __future__ import annotations

from tests.report.html_checks import parse
from voxbench.report.svg import TimelineTurn, distribution_svg, rate_bar_svg, timeline_svg


def test_distribution_overlays_series_on_shared_bins_with_their_medians() -> None:
    svg = distribution_svg({"A": [0.1, 0.2, 0.2, None], "B": [0.4, 0.5]}, title="V2V <ms>", bins=4)
    page = parse(svg)
    bars = page.find("rect")
    assert sum(int(b.text.split(": ")[1].split()[0]) for b in bars) == 5  # None left out
    medians = [line.text for line in page.find("line") if "median" in line.text]
    assert medians == ["A median 200 ms", "B median 450 ms"]
    assert "A: n=3, p50 200 ms" in svg and "B: n=2" in svg
    assert "V2V &lt;ms&gt;" in svg and "<ms>" not in svg


def test_distribution_without_values_says_so() -> None:
    assert "no data" in distribution_svg({"A": []}, title="TTFB")


def test_rate_bar_shows_the_interval() -> None:
    svg = rate_bar_svg(0.9, (0.6, 0.98))
    assert "90.0% (95% CI 60.0%–98.0%)" in svg
    assert "no decided turns" in rate_bar_svg(None, None)


def test_timeline_draws_both_channels_overlaps_tags_and_links_turns() -> None:
    turns = [
        TimelineTurn("0", 0.0, 4.0, user=(0.2, 1.5), agent=(1.8, 3.5), tag=1.8),
        TimelineTurn(
            "<b>1</b>",
            4.0,
            9.0,
            user=(4.2, 6.0),
            agent=(5.8, 8.0),
            overlaps=[(5.8, 6.0)],
            issues=["overlap (0.20 s)", "negative_latency"],
        ),
    ]
    svg = timeline_svg(turns, duration=10.0, unprompted=[(9.2, 9.6)])
    page = parse(svg)
    assert len(page.find("rect", class_="seg-user")) == 2
    assert len(page.find("rect", class_="seg-agent")) == 2
    assert len(page.find("rect", class_="seg-overlap")) == 1
    assert len(page.find("rect", class_="seg-unprompted")) == 1
    assert len(page.find("line", class_="tag")) == 1
    assert [a.attrs["href"] for a in page.find("a")] == ["#turn-0", "#turn-<b>1</b>"]
    assert not page.find("b")  # a turn id is text, never markup
    (issue,) = page.find("text", class_="issue")
    assert issue.text.startswith("overlap, negative_latency")
