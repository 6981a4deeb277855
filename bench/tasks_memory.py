"""Peak memory of ``voxbench tasks run`` as the dataset grows: it should stay flat (streaming).

Builds manifests of N records of 10 s clips (22.05 kHz; the rows share 20 files, so the disk
holds little — every record is still decoded, resampled and encoded on its own), runs the
oracle over each in a fresh process and prints the peak RSS. Records are metadata until their
request is about to be sent, so 10 000 records should cost about what 1 000 do.

    python bench/tasks_memory.py [--sizes 1000,10000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _child(root: Path, records: int) -> None:
    from voxbench.tasks.config import parse_config
    from voxbench.tasks.run import run_tasks

    (root / "tasks" / "mem").mkdir(parents=True, exist_ok=True)
    (root / "tasks" / "mem" / "mem_asr.yaml").write_text(
        f"dataset: {{path: {root / 'data'}, manifest: m{records}.jsonl}}\nmetrics: [wer]\n"
    )
    text = (
        "models: [{name: oracle, model: local/oracle, max_concurrency: 16}]\n"
        f"tasks: [mem_asr]\ntasks_dirs: ['{root / 'tasks'}']\noutput_dir: '{root / 'runs'}'\n"
    )
    started = time.perf_counter()
    result = run_tasks(parse_config(text, file=None), text)
    seconds = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    answered = result.scores["tasks"]["mem_asr"]["oracle"]["answered"]
    print(
        json.dumps({"records": answered, "seconds": round(seconds, 1), "peak_mib": round(peak_mib)})
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(Path(args.child[0]), int(args.child[1]))
        return
    import numpy as np

    from voxbench.audio.wav import Audio, write_wav

    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "data").mkdir()
        for i in range(20):
            t = np.arange(220500) / 22050
            write_wav(
                root / "data" / f"c{i}.wav",
                Audio(0.1 * np.sin(2 * np.pi * (150 + 9 * i) * t), 22050),
            )
        for n in sizes:
            with (root / "data" / f"m{n}.jsonl").open("w") as f:
                for i in range(n):
                    f.write(
                        json.dumps({"id": f"r{i}", "audio": f"c{i % 20}.wav", "reference": "a b"})
                        + "\n"
                    )
        print(f"{'records':>8} {'seconds':>8} {'peak MiB':>9}")
        for n in sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(root), str(n)],
                capture_output=True,
                text=True,
                check=True,
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{row['records']:>8} {row['seconds']:>8} {row['peak_mib']:>9}", flush=True)


if __name__ == "__main__":
    main()
