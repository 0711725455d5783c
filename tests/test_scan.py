"""runner.scan: the facts pass decides which files the fix pass must see, and never drops one that
``fix_source`` has something to say about (a finding, a fix, a problem)."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES

from ddpfix.sources import fix_source
from ddpfix.runner import discover, gather_facts, read_source, scan
from ddpfix.rules import all_rules

RULES = all_rules()


def said_something(path: str, facts) -> bool:
    data = read_source(path)
    if not isinstance(data, bytes):
        return True
    result = fix_source(path, data, RULES, facts)
    return bool(result.findings or result.problems or result.fixed is not None)


def check_scan(paths: list[str]) -> tuple[list[str], list[str]]:
    files, _, _ = discover(paths, respect_gitignore=False)
    facts, to_fix = scan(files, RULES, jobs=1)
    skipped = [path for path in files if path not in to_fix]
    assert to_fix == [path for path in files if path in to_fix], "to_fix keeps the order of the files"
    assert not [path for path in skipped if said_something(path, facts)]
    return to_fix, skipped


def test_the_scan_drops_nothing_from_the_fixtures():
    to_fix, skipped = check_scan([str(FIXTURES)])
    assert to_fix and skipped  # both kinds occur there: negatives without trigger words are skipped


def test_the_scan_keeps_bad_files_lightning_subclasses_elsewhere_and_notebooks(tmp_path):
    (tmp_path / "plain.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01\x02 binary")
    (tmp_path / "latin.py").write_bytes(b"name = '\xe9t\xe9'\n")
    (tmp_path / "cookie.py").write_bytes(b"# -*- coding: klingon -*-\nx = 1\n")
    (tmp_path / "base.py").write_text("import lightning as L\n\n\nclass Base(L.LightningModule):\n    pass\n")
    # No word "lightning" here: a Lightning file only through the class defined in base.py.
    (tmp_path / "model.py").write_text(
        "import torch\nfrom base import Base\n\n\nclass Model(Base):\n"
        "    def training_step(self, batch, batch_idx):\n        return batch.cuda(0)\n"
    )
    (tmp_path / "notebook.ipynb").write_text(json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "source": ["x = 1\n"], "outputs": [], "execution_count": None}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
    }))
    to_fix, skipped = check_scan([str(tmp_path)])
    names = {path.rsplit("/", 1)[-1] for path in to_fix}
    assert {"binary.py", "latin.py", "cookie.py", "model.py", "notebook.ipynb"} <= names
    assert "plain.py" in {path.rsplit("/", 1)[-1] for path in skipped}


def test_the_cli_reports_every_finding_of_a_folder_with_skippable_files(tmp_path, run_cli):
    """Through the real entry point: a rule's fixtures (negatives without trigger words among them,
    which the scan skips) and a bad file: the findings the engine gives over every file, and the problem."""
    import shutil

    shutil.copytree(FIXTURES / "hardcoded-device", tmp_path / "fixtures")
    (tmp_path / "binary.py").write_bytes(b"\x00\x01")
    files, _, _ = discover([str(tmp_path)], respect_gitignore=False)
    facts = gather_facts(files, RULES)
    # Without the scan: the engine over every file.
    expected = sum(
        len(fix_source(path, data, RULES, facts, fix=False).findings)
        for path in files if isinstance(data := read_source(path), bytes)
    )
    out = run_cli("--check", "--no-respect-gitignore", "--jobs", "2", str(tmp_path))
    text = out.stdout.decode() + out.stderr.decode()
    assert out.returncode == 2
    assert "binary.py: E902 cannot read: binary content" in text
    assert len([line for line in out.stdout.decode().splitlines() if ": DDP0" in line]) == expected > 0


def test_hook_words_in_a_lightning_file_without_a_lightning_module_cost_no_fix_pass(tmp_path):
    """Lightning's own modules name ``self.log`` and ``training_step`` everywhere and define no
    LightningModule subclass: rules about code inside one have nothing to say there. A file of the
    run that subclasses one defined elsewhere (without saying "LightningModule") still goes."""
    hooks = "    def training_step(self, batch, batch_idx):\n        self.log('loss', batch.cuda(0).sum())\n"
    (tmp_path / "loggers.py").write_text(f"import lightning as L\n\n\nclass Printer(L.pytorch.loggers.Logger):\n{hooks}")
    (tmp_path / "base.py").write_text(f"import lightning as L\n\n\nclass Base(L.LightningModule):\n{hooks}")
    (tmp_path / "model.py").write_text(f"import lightning as L\nfrom base import Base\n\n\nclass Model(Base):\n{hooks}")
    # A Callback's hooks log through ``pl_module.log``: DDP004 reads them (``Rule.module_kinds``).
    (tmp_path / "callbacks.py").write_text(f"import lightning as L\n\n\nclass Printer(L.Callback):\n{hooks}")
    to_fix, skipped = check_scan([str(tmp_path)])
    assert sorted(path.rsplit("/", 1)[-1] for path in to_fix) == ["base.py", "callbacks.py", "model.py"]
    assert [path.rsplit("/", 1)[-1] for path in skipped] == ["loggers.py"]


def test_files_the_scan_fixes_on_their_own_get_the_results_of_the_fix_pass(tmp_path):
    """``check_files`` lets the scan fix a file whose rules need no facts (here DDP005 in a file
    that is no Lightning code by its words); a file that the facts make Lightning code (a subclass
    of a LightningModule defined elsewhere) goes to the fix pass after all, with every rule."""
    from ddpfix.runner import _scan, check_files

    collective = (
        "import torch.distributed as dist\n\n\ndef sync(rank):\n"
        "    if dist.get_rank() == 0:\n        dist.barrier()\n"
    )
    (tmp_path / "base.py").write_text("import lightning as L\n\n\nclass Base(L.LightningModule):\n    pass\n")
    (tmp_path / "torchy.py").write_text(collective)
    (tmp_path / "model.py").write_text(
        collective + "\n\nfrom base import Base\n\n\nclass Model(Base):\n"
        "    def training_step(self, batch, batch_idx):\n        return batch.cuda(0)\n"
    )
    files, _, _ = discover([str(tmp_path)], respect_gitignore=False)
    for fix in (False, True):
        _, to_fix, done = _scan(files, RULES, 1, fix=fix)
        assert [p.rsplit("/", 1)[-1] for p in done] == ["torchy.py"]
        assert "model.py" in [p.rsplit("/", 1)[-1] for p in to_fix]
        facts, results = check_files(files, RULES, jobs=1, fix=fix)
        expected = [fix_source(p, read_source(p), RULES, facts, fix=fix) for p in files]
        expected = [r for r in expected if r.findings or r.problems or r.fixed is not None]
        assert [(r.path, r.findings, r.fixed) for r in results if r.findings or r.fixed is not None] == [
            (r.path, r.findings, r.fixed) for r in expected
        ]
        codes = {r.path.rsplit("/", 1)[-1]: sorted(f.code for f in r.findings) for r in results}
        assert codes["torchy.py"] == ["DDP005"] and codes["model.py"] == ["DDP005", "DDP006"]


LOADER = ("import torch\nfrom torch.utils.data import DataLoader\n\n\ndef loader(data):\n"
          "    return DataLoader(data, shuffle=True, generator=torch.Generator(device=\"cuda\"))\n")


def test_default_device_switches_a_file_needs_a_parse_for_are_read_only_when_asked(tmp_path):
    """The scan records the path of a file whose only facts are ``with`` blocks (a parse each: most
    of a big tree's scan) and reads it when DDP002 asks; the answer is the eager one, in file order."""
    from ddpfix.facts import ProjectFacts, file_facts

    (tmp_path / "a_context.py").write_text("def run(ctx, step):\n    with ctx:\n        step()\n")
    (tmp_path / "b_switch.py").write_text("import torch\n\n\ndef go(device):\n    torch.set_default_device(device)\n"
                                          "    with torch.device('cuda'):\n        pass\n")
    # (the loader imports the helper: a switch of a file that cannot run with it is not its message's)
    (tmp_path / "c_loader.py").write_text("import a_context\n" + LOADER)
    files, _, _ = discover([str(tmp_path)], respect_gitignore=False)
    facts, to_fix = scan(files, RULES, jobs=1)
    assert facts.switch_parts[0] == files[0]  # a_context.py: deferred
    assert "default_devices" not in vars(facts)  # nothing asked yet
    eager = ProjectFacts.merge([file_facts(path, read_source(path)) for path in files])
    assert facts.default_devices == eager.default_devices and len(eager.default_devices) == 3
    result = fix_source(files[2], read_source(files[2]), RULES, facts)
    [finding] = [f for f in result.findings if f.code == "DDP002"]
    assert finding.unsafe and "a_context.py:2" in finding.detail


def test_a_deferred_file_gone_by_the_time_it_is_read_counts_as_a_switch(tmp_path):
    (tmp_path / "a_context.py").write_text("def run(ctx, step):\n    with ctx:\n        step()\n")
    (tmp_path / "c_loader.py").write_text(LOADER)
    files, _, _ = discover([str(tmp_path)], respect_gitignore=False)
    facts, _ = scan(files, RULES, jobs=1)
    (tmp_path / "a_context.py").unlink()
    [switch] = facts.default_devices
    assert switch.path.endswith("a_context.py") and not switch.cuda


def test_the_cli_marks_a_generator_fix_unsafe_for_a_with_block_in_another_file(tmp_path, run_cli):
    (tmp_path / "a_context.py").write_text("def run(ctx, step):\n    with ctx:\n        step()\n")
    (tmp_path / "c_loader.py").write_text(LOADER)
    # Nothing imports both: they never run in one process, so the block bears on nothing here.
    records = json.loads(run_cli("--output-format", "json", "--no-respect-gitignore", ".", cwd=tmp_path).stdout)
    [finding] = [record for record in records if record["code"] == "DDP002"]
    assert finding["applicability"] == "safe", finding
    # A script that imports both joins them: the block may run the loader's code on a CUDA default.
    (tmp_path / "d_train.py").write_text("from a_context import run\nfrom c_loader import loader\n")
    records = json.loads(run_cli("--output-format", "json", "--no-respect-gitignore", ".", cwd=tmp_path).stdout)
    [finding] = [record for record in records if record["code"] == "DDP002"]
    assert "a_context.py:2" in finding["detail"] and finding["applicability"] == "unsafe"


def test_the_hazard_words_let_through_every_text_a_hazard_pattern_matches():
    from ddpfix.facts import _HAZARDS, _needles, file_facts

    texts = [path.read_bytes() for path in sorted(FIXTURES.rglob("*.py"))]
    texts += [b"from torch.optim.swa_utils import AveragedModel", b"self.ema_model = EMAHelper()", b"x = EMA",
              b"update_bn(loader, model)", b"class D(IterableDataset): pass", b"SCHEMA = 1", b"nothing here"]
    texts += [b"# we define a collate_fn for the loader\nx = 1\n", b"x = '#'; y = dict(collate_fn=f)\n",
              b"loader = DataLoader(d)  # batch_size=None\n"]
    named = 0
    for text in texts:
        # (a comment's words name nothing: the patterns are asked of the code with its comments blanked)
        by_pattern = {name for name, pattern in _HAZARDS.items() if pattern.search(_without_comments(text))}
        assert set(file_facts("x.py", text).hazards) == by_pattern, text[:200]
        named += bool(by_pattern)
    assert named >= 5
    import pytest

    with pytest.raises(ValueError):
        _needles(r"(?:a|b)c")


HF = b"from datasets import load_dataset\n\nds = load_dataset('imdb')\n"


@pytest.mark.parametrize("text, named", [
    # a comment that repeats the words after the code's mention (review helper-56, h2)
    (b"loader = DataLoader(ds, batch_size=None)  # batch_size=None: each item is a batch\n", True),
    # Python ends a comment at a lone carriage return; tokenize does not (r2)
    (b"# each item is a batch\r        loader = DataLoader(ds, batch_size=None)\n", True),
    # a ``.map(`` elsewhere on the line (h3); Hugging Face's ``.map(..., batch_size=None)`` on one of its
    # datasets is not a loader's, whatever the call is spelled; a ``.map`` on what is not known to be one is
    (b"loader = DataLoader(ds.map(fn), batch_size=None)\n", True),
    (HF + b"ds = ds.map(fn, batched=True, batch_size=None)\n", False),
    (HF + b"ds = ds.map(\n    fn,\n    batched=True,\n    batch_size=None,\n)\n", False),
    (HF + b"tokens = load_dataset('imdb')['train'].map(fn, batch_size=None)\ndel ds\n", False),
    (b"ds = ds.map(fn, batched=True, batch_size=None)\n", True),
    (HF + b"def tokenize(ds):\n    return ds.map(fn, batched=True, batch_size=None)\n", True),
    # a variable is its scope's: another function's ``ds`` built otherwise says nothing of this one's
    (b"from datasets import Dataset\n\n\ndef table():\n    ds = Dataset.from_dict({'x': [1]})\n"
     b"    return ds.map(fn, batched=True, batch_size=None)\n\n\ndef loader():\n    ds = table()\n    return ds\n", False),
    (b"# loader = DataLoader(ds, batch_size=None)\nx = 1\n", False),
    # review helper-57: a map of the program's own that builds a loader (m1); Hugging Face's filter (m2);
    # a legacy encoding's columns (g1)
    (b"loader = Shards().map(Pair, batched=True, batch_size=None)\n", True),
    (HF + b"ds = ds.filter(keep, batched=True, batch_size=None)\n", False),
    ('# -*- coding: gbk -*-\nL = {"#\u9a8c\u8bc1\u96c6": lambda: DataLoader(c, batch_size=None)}  # \u6574\n'.encode("gbk"),
     True),
])
def test_a_batched_loader_is_named_in_code_not_in_comments_or_a_map(text, named):
    from ddpfix.facts import file_facts

    assert ("batches made by the program" in file_facts("x.py", text).hazards) is named


def test_a_comment_in_a_base_list_neither_hides_the_base_nor_names_one():
    """A comment inside a class's base list, naming the base it comments on, came first in the match
    and hid the real base (review helper-57, u1): the patterns read the code with comments blanked."""
    from ddpfix.facts import file_facts

    commented = (b"class WholeShards(\n    # torch's DistributedSampler pads every rank to one length\n"
                 b"    DistributedSampler\n):\n    pass\n")
    assert file_facts("x.py", commented).hazards.get("uneven batches") == 1
    only_said = b"class WholeShards(  # not a DistributedSampler\n    Sampler\n):\n    pass\n"
    assert "uneven batches" not in file_facts("x.py", only_said).hazards


def _without_comments(text: bytes) -> bytes:
    """``text`` with each comment's characters blanked, as the tokenizer finds them."""
    import io
    import tokenize

    lines = text.decode("utf-8").splitlines(keepends=True)
    try:
        for token in tokenize.tokenize(io.BytesIO(text).readline):
            if token.type == tokenize.COMMENT:
                row, column = token.start
                line = lines[row - 1]
                lines[row - 1] = line[:column] + " " * len(token.string) + line[column + len(token.string):]
    except (tokenize.TokenError, SyntaxError):
        return text
    return "".join(lines).encode("utf-8")


def test_facts_the_scan_defers_give_every_fixture_the_same_result_as_facts_read_at_once():
    """The scan leaves hazards and some default-device switches to be read when a rule asks; every
    fixture case (with its other files, whole or partial as the case says) comes out the same."""
    from fixture_cases import cases

    from ddpfix.facts import ProjectFacts, file_facts
    from ddpfix.runner import _facts_of_path

    asked = 0
    for case in cases():
        if case.input.suffix != ".py":
            continue
        group = [str(path) for path in case.group]
        deferred = ProjectFacts.merge([_facts_of_path(path) for path in group], whole=case.whole)
        at_once = ProjectFacts.merge([file_facts(path, read_source(path)) for path in group], whole=case.whole)
        for unsafe in (False, True):
            options = {"unsafe_fixes": unsafe}
            data = case.input.read_bytes()
            late = fix_source(str(case.input), data, RULES, deferred, options=options)
            now = fix_source(str(case.input), data, RULES, at_once, options=options)
            assert (late.output, late.findings) == (now.output, now.findings), case.id
        asked += bool(deferred._read)
    assert asked >= 5  # the rules did ask for what was deferred


def test_a_hazard_named_in_a_file_without_lightning_is_read_when_a_fix_asks(tmp_path, run_cli):
    """``ema.py`` (no Lightning word: its hazards are left to be read) averages the weights: the
    private-mask fix of model.py, safe on its own, is unsafe in this project."""
    model = (FIXTURES / "tensor-attribute" / "averaging_elsewhere" / "model.py").read_text()
    (tmp_path / "model.py").write_text(model)
    (tmp_path / "ema.py").write_text("from torch.optim.swa_utils import AveragedModel\n\n\ndef average(model):\n"
                                     "    return AveragedModel(model)\n")
    # Nothing imports both: ema.py never runs with model.py's module.
    records = json.loads(run_cli("--output-format", "json", "--no-respect-gitignore", ".", cwd=tmp_path).stdout)
    [finding] = [record for record in records if record["code"] == "DDP007"]
    assert finding["applicability"] == "safe", finding
    (tmp_path / "train.py").write_text("import ema\nimport model\n")  # the script joins them
    records = json.loads(run_cli("--output-format", "json", "--no-respect-gitignore", ".", cwd=tmp_path).stdout)
    [finding] = [record for record in records if record["code"] == "DDP007"]
    assert finding["applicability"] == "unsafe" and "weight averaging" in finding["unsafe_reason"]
    (tmp_path / "ema.py").write_text("def average(model):\n    return model\n")
    records = json.loads(run_cli("--output-format", "json", "--no-respect-gitignore", ".", cwd=tmp_path).stdout)
    [finding] = [record for record in records if record["code"] == "DDP007"]
    assert finding["applicability"] == "safe"
