"""The compare page of task and FDB runs sets each number beside the same model's number."""

from __future__ import annotations

from voxbench.store import Result, RunRow
from voxbench.viewer.pages import compare_page, score_pairs


def _run(run_id: str, results: list[tuple[str, str, float]]) -> RunRow:
    return RunRow(
        run_id=run_id,
        kind="tasks",
        benchmark="builtin_en_asr",
        target=",".join(sorted({t for _, t, _ in results})),
        status="finished",
        path="/nowhere",
        results=[
            Result(benchmark=b, target=t, dimension="wer", value=v, higher_is_better=False)
            for b, t, v in results
        ],
    )


def test_a_run_with_two_models_compared_with_itself_shows_equal_numbers() -> None:
    # Matched by benchmark and metric alone, Whisper's 19.2 stood beside the oracle's 0.0.
    run = _run(
        "T",
        [
            ("builtin_en_asr", "local/oracle", 0.0),
            ("builtin_en_asr", "local/whisper-tiny.en", 19.2),
        ],
    )
    page = compare_page(run, run)
    assert [(label, a.value, b.value) for label, a, b in page.scores] == [  # type: ignore[union-attr]
        ("builtin_en_asr · local/oracle · wer", 0.0, 0.0),
        ("builtin_en_asr · local/whisper-tiny.en · wer", 19.2, 19.2),
    ]


def test_two_single_model_runs_compare_model_against_model() -> None:
    a = _run("A", [("builtin_en_asr", "local/whisper-tiny.en", 19.2)])
    b = _run("B", [("builtin_en_asr", "openai/gpt-4o-transcribe", 7.5)])
    ((label, ra, rb),) = score_pairs(a, b)
    assert label == "builtin_en_asr · wer" and (ra.value, rb.value) == (19.2, 7.5)  # type: ignore[union-attr]


def test_a_score_only_one_run_has_is_shown_against_nothing() -> None:
    a = _run("A", [("t1", "x/m", 1.0), ("t1", "y/m", 2.0)])
    b = _run("B", [("t1", "x/m", 3.0)])
    pairs = {label: (ra and ra.value, rb and rb.value) for label, ra, rb in score_pairs(a, b)}
    assert pairs == {"t1 · x/m · wer": (1.0, 3.0), "t1 · y/m · wer": (2.0, None)}
