"""How findings read (docs/output.md): short finding lines, the explanation behind -v and in JSON,
--write listing what is left."""

from __future__ import annotations

import json
import re

from conftest import ROOT

LINE = re.compile(r"^(?P<path>[^:]+(?::cell \d+)?):(?P<line>\d+):(?P<column>\d+): (?P<code>DDP\d{3}) (?:\[[*~]\] )?(?P<message>.+)$")

# Named alone, the generator's fix is unsafe (another file may make CUDA the default device).
# A module-level generator: another file may import it for CUDA work, so its fix is unsafe.
UNSAFE = b'''import torch
from torch.utils.data import DataLoader

gen = torch.Generator(device="cuda")
loader = DataLoader(range(8), shuffle=True, generator=gen)
'''
# A safe fix (the run reads the whole folder) and a finding with no rewrite (the device is a variable).
MIXED = b'''import torch
from torch.utils.data import DataLoader

a = DataLoader(range(8), shuffle=True, generator=torch.Generator(device="cuda"))
b = DataLoader(range(8), shuffle=True, generator=torch.Generator(device=DEVICE))
'''


def test_every_fixture_finding_has_a_short_message_and_a_detail(run_cli):
    proc = run_cli("--check", "--output-format", "json", "fixtures", cwd=ROOT, timeout=300)
    findings = [r for r in json.loads(proc.stdout) if r["code"].startswith("DDP")]
    assert len(findings) > 400
    for record in findings:
        assert "\n" not in record["message"] and len(record["message"]) <= 100, record
        assert record["detail"] and len(record["detail"]) > len(record["message"]), record


def test_check_lines_keep_their_shape_and_verbose_explains_them(tmp_path, run_cli):
    (tmp_path / "train.py").write_bytes(UNSAFE)
    plain = run_cli("--check", "train.py", cwd=tmp_path).stdout.decode().splitlines()
    assert len(plain) == 1
    found = LINE.match(plain[0])
    assert found and found["message"] == "CUDA generator reaches DataLoader (line 5), which draws on the CPU"
    assert "[~]" in plain[0] and "unsafe fix" not in plain[0]
    verbose = run_cli("--check", "-v", "train.py", cwd=tmp_path).stdout.decode().splitlines()
    assert verbose[0] == plain[0]
    assert verbose[1].startswith("    CUDA generator reaches DataLoader (line 5): indices are drawn with it on the CPU")
    assert verbose[2].startswith("    unsafe fix: `gen` is a module-level name")
    # The file has no __main__ block: the offer names the script that trains it, not this file.
    assert verbose[3] == ("    check it by a run on CPU ranks: ddpfix rehearse --verify --unsafe-fixes -- python "
                          "YOUR_TRAINING_SCRIPT.py")
    assert len(verbose) == 4 and not any(LINE.match(line) for line in verbose[1:])  # editors see one finding
    (tmp_path / "train.py").write_bytes(UNSAFE + b'\nif __name__ == "__main__":\n    pass\n')
    verbose = run_cli("--check", "-v", "train.py", cwd=tmp_path).stdout.decode().splitlines()
    assert verbose[3].endswith("-- python train.py")


def test_write_lists_what_is_left_and_show_fixes_the_fixes(tmp_path, run_cli):
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "train.py").write_bytes(MIXED)
    left = run_cli("--write", "a", cwd=tmp_path)
    assert left.stdout.decode().splitlines() == [
        "a/train.py:5:50: DDP002 generator of a non-literal device reaches DataLoader (line 5)"]
    assert "Fixed 1 issue in 1 file. 1 issue needs a manual fix" in left.stderr.decode()
    shown = run_cli("--write", "--show-fixes", "b", cwd=tmp_path).stdout.decode().splitlines()
    assert shown == ["b/train.py:4:50: DDP002 [fixed] CUDA generator reaches DataLoader (line 4), which draws on the CPU",
                     left.stdout.decode().splitlines()[0].replace("a/", "b/")]
    assert (tmp_path / "a" / "train.py").read_bytes() == (tmp_path / "b" / "train.py").read_bytes() != MIXED
