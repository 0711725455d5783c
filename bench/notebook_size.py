"""Time and peak memory of ddpfix on large notebooks: ``python bench/notebook_size.py [--mb 50]``.

Not a test: a script to rerun by hand. Builds notebooks of about ``--mb`` MB in a temporary folder,
each with one fixable cell (``Trainer(strategy="ddp")``) and the rest outputs, and runs the installed
``ddpfix --check`` and ``ddpfix --write`` on a fresh copy of each through ``bench/measure.py`` (wall
seconds, peak RSS of the ddpfix process). Prints one JSON line per notebook and mode.

- ``stream``: training output, one stream of progress-bar lines (many short non-ASCII strings);
- ``images``: display outputs holding base64 PNGs of 1 MB (few long strings);
- ``tiny``: one output of hundreds of thousands of tiny JSON objects (the costly shape per byte).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = "Epoch 0:  42%|████▏     | 420/1000 [00:10<00:14, 41.2it/s, loss=0.123, v_num=0]\r"


def notebook(kind: str, size: int) -> bytes:
    cell = {"cell_type": "code", "execution_count": 1, "id": "c0", "metadata": {}, "outputs": [],
            "source": ["import lightning as L\n", 'trainer = L.Trainer(devices=2, strategy="ddp")\n', "trainer.fit(model)"]}
    if kind == "stream":
        cell["outputs"] = [{"name": "stderr", "output_type": "stream", "text": [LINE] * (size // (len(LINE.encode()) + 10))}]
    elif kind == "images":
        blob = base64.b64encode(os.urandom(750_000)).decode()
        cell["outputs"] = [{"data": {"image/png": blob, "text/plain": ["<Figure>"]}, "metadata": {},
                            "output_type": "display_data"} for _ in range(size // 1_000_000)]
    else:
        cell["outputs"] = [{"data": {"application/json": [{}] * (size // 8)}, "metadata": {}, "output_type": "display_data"}]
    content = {"cells": [cell], "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
               "nbformat": 4, "nbformat_minor": 5}
    return (json.dumps(content, indent=1, ensure_ascii=False) + "\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--kinds", default="stream,images,tiny")
    args = parser.parse_args()
    ddpfix = shutil.which("ddpfix", path=os.path.dirname(sys.executable)) or "ddpfix"
    with tempfile.TemporaryDirectory() as folder:
        for kind in args.kinds.split(","):
            data = notebook(kind, args.mb * 2**20)
            for mode in ("--check", "--write"):
                path = Path(folder, f"{kind}.ipynb")
                path.write_bytes(data)
                proc = subprocess.run([sys.executable, str(HERE / "measure.py"), "--", ddpfix, mode, str(path)],
                                      capture_output=True, text=True, check=True)
                cost = json.loads(proc.stdout)
                written = path.read_bytes() != data
                print(json.dumps({"kind": kind, "mb": round(len(data) / 2**20, 1), "mode": mode, "written": written,
                                  "wall_s": cost["wall_s"], "rc": cost["rc"], "maxrss_mb": cost["maxrss_mb"]}), flush=True)


if __name__ == "__main__":
    main()
