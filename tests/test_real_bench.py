"""bench/real/run.py: matching findings to verdicts and known pitfalls, and the arithmetic of its figures.

A tiny synthetic project in tmp_path (already "materialised": its cache stamp names the pinned commit), a fake
ddpfix that prints fixed JSON records, and synthetic manifest / verdict / known files: no network, no mirror.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[1] / "bench" / "real" / "run.py"
COMMIT = "0" * 40


@pytest.fixture(scope="module")
def run_mod():
    spec = importlib.util.spec_from_file_location("real_bench_run", RUN)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["real_bench_run"] = mod
    spec.loader.exec_module(mod)
    return mod


SOURCE = textwrap.dedent("""\
    class M:
        def validation_step(self, batch, i):
            self.log("val_loss", loss)
            self.log("val_loss", loss)
            x = torch.zeros(3)
            y = 1
            a, b = random_split(ds, [5, 5])
    """)


def record(path, line, code, applicability=None, message="m"):
    return {"path": path, "line": line, "column": 1, "code": code, "message": message,
            "fixable": applicability is not None, "applicability": applicability, "suppressed": False, "cell": None}


def setup_bench(tmp_path: Path, records_by_project: dict[str, list[dict]], shift: int = 0) -> list[str]:
    cache = tmp_path / "cache"
    for name in records_by_project:
        root = cache / name
        root.mkdir(parents=True)
        (root / "a.py").write_text("\n" * shift + SOURCE)
        (root / ".ddpfix-real-commit").write_text(COMMIT + "\n")
    fake = tmp_path / "fake_ddpfix.py"
    fake.write_text(textwrap.dedent(f"""\
        import json, os, sys
        recs = json.loads({json.dumps(json.dumps(records_by_project))})[os.path.basename(os.getcwd())]
        print(json.dumps(recs))
        sys.exit(1 if recs else 0)
        """))
    (tmp_path / "manifest.toml").write_text("".join(
        f'[[project]]\nname = "{n}"\nrepo = "x/{n}"\ncommit = "{COMMIT}"\nlightning = "2.x"\nkind = "test"\n\n'
        for n in records_by_project))
    (tmp_path / "verdicts.toml").write_text(textwrap.dedent("""\
        [[verdict]]
        project = "p"
        path = "a.py"
        code = "DDP004"
        text = 'self.log("val_loss", loss)'
        verdict = "right"
        why = "per-rank loss"
        fix = "right"

        [[verdict]]
        project = "p"
        path = "a.py"
        code = "DDP004"
        text = 'self.log("val_loss", loss)'
        occurrence = 2
        verdict = "wrong"
        why = "already global"
        fix = "wrong"

        [[verdict]]
        project = "p"
        path = "a.py"
        code = "DDP006"
        text = "x = torch.zeros(3)"
        verdict = "noise"
        why = "harmless"

        [[verdict]]
        project = "p"
        path = "gone.py"
        code = "DDP004"
        text = "self.log('old', v)"
        verdict = "right"
        why = "a finding that no longer exists"
        """))
    (tmp_path / "known.toml").write_text(textwrap.dedent("""\
        [[pitfall]]
        project = "p"
        path = "a.py"
        code = "DDP012"
        text = "a, b = random_split(ds, [5, 5])"
        what = "found by its text"

        [[pitfall]]
        project = "p"
        path = "a.py"
        code = "DDP004"
        text = 'self.log("val_loss", loss)'
        occurrence = 2
        what = "the second of two identical lines"

        [[pitfall]]
        project = "p"
        path = "a.py"
        code = "DDP003"
        text = "y = 1"
        what = "missed: no DDP003 finding"
        """))
    return ["--manifest", str(tmp_path / "manifest.toml"), "--verdicts", str(tmp_path / "verdicts.toml"),
            "--known", str(tmp_path / "known.toml"), "--cache", str(cache), "--mirrors", str(tmp_path / "none"),
            "--no-clone", "--ddpfix", f"{sys.executable} {fake}", "--json"]


def findings_for(shift: int) -> list[dict]:
    return [record("a.py", 3 + shift, "DDP004", "safe"), record("a.py", 4 + shift, "DDP004", "safe"),
            record("a.py", 5 + shift, "DDP006", "unsafe"), record("a.py", 7 + shift, "DDP012", "unsafe"),
            record("a.py", 0, "E999", None, "could not parse")]


@pytest.mark.parametrize("shift", [0, 3])
def test_scores(run_mod, tmp_path, capsys, shift):
    args = setup_bench(tmp_path, {"p": findings_for(shift)}, shift)
    assert run_mod.main(args) == 0  # an unparsable file (E999) is no crash
    out = json.loads(capsys.readouterr().out)
    rules = out["per_rule"]
    assert rules["DDP004"]["right"] == 1 and rules["DDP004"]["wrong"] == 1
    assert rules["DDP004"]["precision"] == pytest.approx(0.5)
    assert rules["DDP006"]["noise"] == 1 and rules["DDP006"]["precision"] == 0.0
    assert rules["DDP012"]["unjudged"] == 1 and rules["DDP012"]["precision"] is None
    assert out["overall"]["findings"] == 4
    assert out["overall"]["precision"] == pytest.approx(1 / 3)  # right / judged, unjudged left out
    assert out["provisional"] is True
    assert [(u["code"], u["line"]) for u in out["unjudged"]] == [("DDP012", 7 + shift)]
    assert out["overall"]["safe_fixes"] == 2 and out["overall"]["unsafe_fixes"] == 2
    assert [f["line"] for f in out["safe_fixes_judged_wrong"]] == [4 + shift]
    assert out["known"]["found"] == 2 and out["known"]["total"] == 3
    assert out["recall"] == pytest.approx(2 / 3)
    assert [m["code"] for m in out["known"]["missed"]] == ["DDP003"]
    assert out["stale_verdicts"] == [["p", "gone.py", "DDP004", "self.log('old', v)", 1]]
    assert out["crashes"] == []


def test_occurrence_distinguishes_identical_lines(run_mod, tmp_path, capsys):
    # only the first of the two identical log lines is reported: the known pitfall on the second is missed,
    # and the finding takes the verdict of occurrence 1
    recs = [record("a.py", 3, "DDP004", "safe")]
    run_mod.main(setup_bench(tmp_path, {"p": recs}))
    out = json.loads(capsys.readouterr().out)
    assert out["per_rule"]["DDP004"]["right"] == 1 and out["per_rule"]["DDP004"].get("wrong", 0) == 0
    assert out["known"]["found"] == 0 and out["recall"] == 0.0


def test_crashes_and_missing(run_mod, tmp_path, capsys):
    recs = {"p": findings_for(0), "q": [record("a.py", 1, "DDP004", None, "internal error: KeyError: 'x'")]}
    args = setup_bench(tmp_path, recs)
    (tmp_path / "manifest.toml").write_text((tmp_path / "manifest.toml").read_text()
                                            + f'[[project]]\nname = "r"\nrepo = "x/r"\ncommit = "{COMMIT}"\n')
    assert run_mod.main(args) == 1  # a crash fails the run
    out = json.loads(capsys.readouterr().out)
    assert [c["project"] for c in out["crashes"]] == ["q"]
    assert [m["project"] for m in out["missing"]] == ["r"]  # no mirror, no clone: reported, not a crash
    assert out["size"]["projects"] == 2
