"""``core.runlog``: run.log lines are timestamped, redacted, and only this run's."""

from __future__ import annotations

import asyncio
import logging
import re
from pathlib import Path

from voxbench.core.runlog import run_log
from voxbench.core.secrets import remember_secret

log = logging.getLogger("voxbench.tests.runlog")


def test_lines_are_utc_stamped_and_redacted(tmp_path: Path) -> None:
    remember_secret("a-remembered-secret-value")
    path = tmp_path / "run.log"
    with run_log(path):
        log.info("using %s and sk-abcdefghijklmnopqrstuvwx", "a-remembered-secret-value")
        log.debug("not at info level")
    log.warning("after the run: not in its log")
    (line,) = path.read_text().splitlines()
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO voxbench\.tests\.runlog: using \*\*\* and \*\*\*",
        line,
    )


def test_two_runs_in_one_process_each_keep_their_own_lines(tmp_path: Path) -> None:
    async def one(name: str) -> None:
        with run_log(tmp_path / f"{name}.log"):
            for i in range(3):
                log.info("%s step %d", name, i)
                await asyncio.sleep(0)
                await asyncio.to_thread(log.info, "%s in a thread %d", name, i)

    async def both() -> None:
        await asyncio.gather(one("alpha"), one("bravo"))

    asyncio.run(both())
    for name, other in (("alpha", "bravo"), ("bravo", "alpha")):
        text = (tmp_path / f"{name}.log").read_text()
        assert text.count(f"{name} step") == 3 and text.count(f"{name} in a thread") == 3
        assert other not in text


def test_the_loggers_level_is_given_back(tmp_path: Path) -> None:
    logger = logging.getLogger("voxbench")
    logger.setLevel(logging.ERROR)
    try:
        with run_log(tmp_path / "run.log"):
            assert logger.level == logging.INFO
        assert logger.level == logging.ERROR
    finally:
        logger.setLevel(logging.NOTSET)
