"""κ and α against published worked examples (scikit-learn and the ``krippendorff`` package
are not dependencies; their expected values are written here once, with their source)."""

from __future__ import annotations

import pytest

from voxbench.judging.audio.agreement import (
    bootstrap_interval,
    cohen_kappa,
    krippendorff_alpha,
    permutation_p,
)


def test_cohen_kappa_matches_scikit_learns_fixtures() -> None:
    """scikit-learn's ``test_cohen_kappa`` (sklearn/metrics/tests/test_classification.py):
    the multiclass example of Artstein & Poesio (2008), table 4, and the weighting example."""
    y1 = [0] * 46 + [1] * 44 + [2] * 10
    y2 = [0] * 52 + [1] * 32 + [2] * 16
    assert cohen_kappa(y1, y2, [0, 1, 2]) == pytest.approx(0.8013, abs=5e-5)
    y2 = [0] * 50 + [1] * 40 + [2] * 10
    assert cohen_kappa(y1, y2, [0, 1, 2]) == pytest.approx(0.9315, abs=5e-5)
    assert cohen_kappa(y1, y2, [0, 1, 2], "linear") == pytest.approx(0.9412, abs=5e-5)
    assert cohen_kappa(y1, y2, [0, 1, 2], "quadratic") == pytest.approx(0.9541, abs=5e-5)


def test_cohen_kappa_by_hand() -> None:
    """Wikipedia's 2×2 example: 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no; p_o = 0.7,
    p_e = 0.5·0.6 + 0.5·0.4 = 0.5, κ = 0.4. On a 1–5 scale the weights use the scale's
    positions, so a category nobody used still counts in the distance."""
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(a, b, ["y", "n"]) == pytest.approx(0.4)
    # Quadratic by hand: O = [[1,0],[0,1]] on values 1 and 5 of 1–5 (positions 0 and 4):
    # observed disagreement 0, so κ = 1; one swap of two items gives O = [[0,1],[1,0]],
    # E = [[.5,.5],[.5,.5]]: Σ w·O = 2·16, Σ w·E = 16 → κ = 1 − 32/16 = −1.
    assert cohen_kappa([1, 5], [1, 5], range(1, 6), "quadratic") == pytest.approx(1.0)
    assert cohen_kappa([1, 5], [5, 1], range(1, 6), "quadratic") == pytest.approx(-1.0)
    assert cohen_kappa([3, 3], [3, 3], range(1, 6)) is None  # no chance disagreement


KRIPPENDORFF_2011 = [
    # Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C:
    # 4 observers × 12 units, None where an observer gave no value.
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_krippendorff_alpha_matches_the_worked_example(level: str, published: float) -> None:
    units = list(zip(*KRIPPENDORFF_2011, strict=True))
    assert krippendorff_alpha(units, level) == pytest.approx(published, abs=5e-4)  # type: ignore[arg-type]


def test_krippendorff_alpha_by_hand_for_two_raters() -> None:
    """Two raters, units (1,1) (2,2) (1,2): coincidences o11 = 2, o22 = 2, o12 = o21 = 1,
    n1 = n2 = 3, n = 6. Nominal: α = 1 − 5·2 / (2·3·3) = 4/9; interval (δ² = 1): the same."""
    units = [(1, 1), (2, 2), (1, 2)]
    assert krippendorff_alpha(units, "nominal") == pytest.approx(4 / 9)
    assert krippendorff_alpha(units, "interval") == pytest.approx(4 / 9)
    assert krippendorff_alpha([(3, 3), (3, 3)], "interval") is None
    assert krippendorff_alpha([(1, None), (2,)], "nominal") is None  # nothing pairable


def test_bootstrap_and_permutation_are_seeded() -> None:
    labels = [1, 2, 3, 4, 5] * 4
    judged = [1, 2, 3, 4, 5] * 4

    def kappa(order) -> float | None:  # noqa: ANN001
        return cohen_kappa([labels[i] for i in range(len(order))], [judged[i] for i in order],
                           range(1, 6), "quadratic")  # fmt: skip

    mean, p = permutation_p(kappa, len(labels))
    assert p is not None and p < 0.01 and mean is not None and abs(mean) < 0.2
    assert permutation_p(kappa, len(labels)) == (mean, p)

    def resampled(pick) -> float | None:  # noqa: ANN001
        return cohen_kappa([labels[i] for i in pick], [judged[i] for i in pick], range(1, 6))

    assert bootstrap_interval(resampled, len(labels)) == (1.0, 1.0)
