"""The two corpora of the benchmark.

* A, "a big tree with little Lightning": the ``.py`` files of an installed torch + lightning +
  transformers, copied out of the bench venv's site-packages (ddpfix, like Ruff, skips
  ``site-packages`` folders).
* B, "all Lightning": Lightning scripts made from the project's fixtures (the inputs that have
  findings), several per file, their classes and functions renamed, padded with ordinary code
  (helpers, docstrings, a dataset, argument parsing) to realistic and varied sizes. Deterministic
  for a given seed and fixture set.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import re
import shutil
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"

# Folder names ddpfix and Ruff skip by default: leaving them out of the copy makes every tool see the
# same files (src/ddpfix/runner.py DEFAULT_EXCLUDES; Ruff's default excludes are a superset).
SKIPPED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", ".eggs", "build", "dist", "__pycache__",
    "site-packages", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".ipynb_checkpoints",
    "_build", "buck-out", "__pypackages__", ".direnv", ".git-rewrite", ".pants.d", ".pytype", ".svn", "_darcs",
    ".bzr", ".vscode",
})
# Everything the three packages installed (their dependencies too), less the venv's own tooling.
CORPUS_A_SKIP = frozenset({"pip", "setuptools", "_distutils_hack", "pkg_resources", "wheel"})


def tree_stats(folder: Path) -> dict:
    count = size = 0
    for path in folder.rglob("*.py"):
        count += 1
        size += path.stat().st_size
    return {"files": count, "mb": round(size / 1e6, 1)}


# --- corpus A ----------------------------------------------------------------------------------


def make_corpus_a(site_packages: Path, target: Path) -> dict:
    stamp = target / ".stamp.json"
    if stamp.exists():
        return json.loads(stamp.read_text())
    if target.exists():
        shutil.rmtree(target)
    for package in ("torch", "lightning", "transformers"):
        if not (site_packages / package).is_dir():
            raise SystemExit(f"corpus A: {site_packages / package} is missing from the bench venv")
    for folder, dirs, names in os.walk(site_packages):
        if Path(folder) == site_packages:
            dirs[:] = [d for d in dirs if d not in CORPUS_A_SKIP]
            names = []
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        relative = Path(folder).relative_to(site_packages)
        wanted = [n for n in names if n.endswith(".py")]
        if not wanted:
            continue
        (target / relative).mkdir(parents=True, exist_ok=True)
        for name in wanted:
            shutil.copyfile(os.path.join(folder, name), target / relative / name)
    info = {"corpus": "A", "from": "site-packages of torch==2.13.0 + lightning + transformers", **tree_stats(target)}
    stamp.write_text(json.dumps(info))
    return info


# --- corpus B ----------------------------------------------------------------------------------


def fixture_snippets() -> list[tuple[str, str]]:
    """(rule folder, source) of each fixture input with findings, one file per case.

    Left out: negative cases, case folders (their facts cross files), and the cases whose words
    change facts for a whole folder (a ``seed_everything`` seed, ``use_distributed_sampler=False``),
    so each generated file's findings are its own.
    """
    snippets = []
    for path in sorted(FIXTURES.glob("*/*.py")):
        if path.name.endswith((".expected.py", ".unsafe.py")) or path.name.startswith("neg_"):
            continue
        outputs = (path.with_name(path.stem + kind) for kind in (".expected.py", ".unsafe.py", ".findings"))
        if not any(output.exists() for output in outputs):
            continue
        text = path.read_text(encoding="utf-8")
        if "seed_everything" in text or "use_distributed_sampler" in text or "# noqa" in text or "ddpfix:" in text:
            continue
        snippets.append((path.parent.name, text))
    return snippets


_DEF = re.compile(r"^(?:class|def|async def)\s+(\w+)", re.M)


def rename(source: str, suffix: str) -> str:
    """Rename the top-level classes and functions a snippet defines (``Model`` -> ``Model_s12``),
    everywhere they are used as names (not in strings or comments)."""
    defined = set(_DEF.findall(source))
    if not defined:
        return source
    lines = source.splitlines(keepends=True)
    spots = [
        token.start
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.NAME and token.string in defined
    ]
    for row, column in reversed(spots):  # right to left, so earlier columns stay valid
        line = lines[row - 1]
        end = column + len(re.match(r"\w+", line[column:]).group())
        lines[row - 1] = line[:end] + "_" + suffix + line[end:]
    return "".join(lines)


_VERBS = ["load", "build", "compute", "prepare", "merge", "split", "scale", "collect", "format", "check", "parse", "summarise"]
_NOUNS = ["config", "features", "labels", "batch", "metrics", "weights", "records", "tokens", "schedule", "paths", "stats", "targets"]
_WORDS = ("the of a to and in is for that with as on by this be are from at or it an".split()
          + "value values input output result batch sample model data loss step epoch rank device tensor".split())


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _docstring(rng: random.Random, indent: str) -> str:
    lines = [_sentence(rng, rng.randint(5, 12))]
    if rng.random() < 0.6:
        lines.append("")
        for _ in range(rng.randint(1, 4)):
            lines.append(_sentence(rng, rng.randint(6, 14)))
    if rng.random() < 0.5:
        lines += ["", "Args:"] + [f"    {rng.choice(_NOUNS)}: {_sentence(rng, rng.randint(3, 8))}" for _ in range(rng.randint(1, 3))]
    body = ("\n" + indent).join(lines).replace("\n" + indent + "\n", "\n\n")
    return f'{indent}"""{body}\n{indent}"""\n'


def _helper(rng: random.Random, name: str) -> str:
    arg = rng.choice(_NOUNS)
    kind = rng.randrange(5)
    head = f"def {name}({arg}, scale={rng.randint(1, 9)}, *, strict={rng.choice(['True', 'False'])}):\n"
    doc = _docstring(rng, "    ")
    if kind == 0:
        body = (
            f"    out = []\n"
            f"    for index, item in enumerate({arg}):\n"
            f"        if strict and item is None:\n"
            f"            raise ValueError(f\"missing item {{index}}\")\n"
            f"        out.append((item or 0) * scale + {rng.randint(0, 99)})\n"
            f"    return out\n"
        )
    elif kind == 1:
        body = (
            f"    totals = {{}}\n"
            f"    for key, value in {arg}.items():\n"
            f"        totals[key] = totals.get(key, 0) + value * scale  # running sum\n"
            f"    return {{k: v / max(1, len({arg})) for k, v in sorted(totals.items())}}\n"
        )
    elif kind == 2:
        body = (
            f"    path = Path({arg}).expanduser()\n"
            f"    if not path.exists():\n"
            f"        return None if not strict else path.mkdir(parents=True, exist_ok=True)\n"
            f"    with path.open() as handle:\n"
            f"        lines = [line.strip() for line in handle if line.strip() and not line.startswith(\"#\")]\n"
            f"    return lines[:: max(1, scale)]\n"
        )
    elif kind == 3:
        body = (
            f"    x = torch.as_tensor({arg}, dtype=torch.float32)\n"
            f"    x = (x - x.mean()) / (x.std() + 1e-{rng.randint(5, 8)})\n"
            f"    return torch.clamp(x * scale, min=-{rng.randint(2, 9)}.0, max={rng.randint(2, 9)}.0)\n"
        )
    else:
        body = (
            f"    try:\n"
            f"        value = float({arg})\n"
            f"    except (TypeError, ValueError):\n"
            f"        return {rng.random():.3f}\n"
            f"    while value > scale * {rng.randint(10, 1000)}:\n"
            f"        value /= 2\n"
            f"    return round(value, {rng.randint(1, 6)})\n"
        )
    return head + doc + body


def _dataset(rng: random.Random, name: str) -> str:
    n = rng.randint(64, 4096)
    return (
        f"class {name}(Dataset):\n"
        + _docstring(rng, "    ")
        + f"\n    def __init__(self, size={n}, dim={rng.randint(4, 128)}):\n"
        f"        self.size = size\n"
        f"        self.data = torch.randn(size, dim)\n"
        f"        self.targets = torch.randint(0, {rng.randint(2, 100)}, (size,))\n"
        f"\n    def __len__(self):\n"
        f"        return self.size\n"
        f"\n    def __getitem__(self, index):\n"
        f"        return self.data[index], self.targets[index]\n"
    )


def _config(rng: random.Random, name: str) -> str:
    fields = "".join(
        f"    {rng.choice(_NOUNS)}_{i}: {rng.choice(['int', 'float', 'str', 'bool'])} = "
        f"{rng.choice(['0', '1.0', repr('x'), 'False', str(rng.randint(1, 512))])}\n"
        for i in range(rng.randint(3, 12))
    )
    return f"@dataclass\nclass {name}:\n" + _docstring(rng, "    ") + fields


def _argparser(rng: random.Random, name: str) -> str:
    options = "".join(
        f"    parser.add_argument(\"--{rng.choice(_NOUNS)}-{i}\", type={rng.choice(['int', 'float', 'str'])}, "
        f"default=None, help=\"{_sentence(rng, rng.randint(3, 8))}\")\n"
        for i in range(rng.randint(3, 10))
    )
    return f"def {name}(argv=None):\n" + _docstring(rng, "    ") + "    parser = argparse.ArgumentParser()\n" + options + "    return parser.parse_args(argv)\n"


PREAMBLE = "import argparse\nfrom dataclasses import dataclass\nfrom pathlib import Path\n\nimport torch\nfrom torch.utils.data import Dataset\n"


def _padding(rng: random.Random, size: int, tag: str) -> list[str]:
    blocks, total, i = [], 0, 0
    makers = [_helper, _helper, _helper, _dataset, _config, _argparser]
    while total < size:
        maker = rng.choice(makers)
        name = f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}_{tag}_{i}"
        if maker in (_dataset, _config):
            name = "".join(part.title() for part in name.split("_"))
        block = maker(rng, name)
        blocks.append(block)
        total += len(block)
        i += 1
    return blocks


def corpus_b_key(files: int, seed: int) -> str:
    digest = hashlib.sha256()
    for rule, text in fixture_snippets():
        digest.update(rule.encode() + b"\0" + text.encode())
    digest.update(Path(__file__).read_bytes())
    return f"{files}-{seed}-{digest.hexdigest()[:12]}"


def make_corpus_b(target: Path, files: int = 2000, seed: int = 0, parts: int = 4) -> dict:
    """``files`` scripts in ``parts`` sub-folders of equal size (``part0``...), so that a run over the
    first k parts is a smaller corpus of the same kind."""
    key = corpus_b_key(files, seed)
    stamp = target / ".stamp.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("key") == key:
        return json.loads(stamp.read_text())
    if target.exists():
        shutil.rmtree(target)
    rng = random.Random(seed)
    snippets = fixture_snippets()
    by_rule: dict[str, list[str]] = {}
    for rule, text in snippets:
        by_rule.setdefault(rule, []).append(text)
    rules = sorted(by_rule)
    per_part = files // parts
    for n in range(files):
        folder = target / f"part{n // per_part}" / f"proj{n % 50:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        chosen_rules = rng.sample(rules, rng.randint(2, 4))
        pieces = [rename(rng.choice(by_rule[rule]), f"f{n}s{i}") for i, rule in enumerate(chosen_rules)]
        # Sizes like real training scripts: mostly 2-10 kB, some much bigger.
        size = int(min(60_000, rng.lognormvariate(8.4, 0.8)))
        padding = _padding(rng, max(0, size - sum(map(len, pieces))), f"f{n}")
        # Helpers first (after the imports), the Lightning code in the middle, more helpers after.
        cut = rng.randint(0, len(padding))
        body = [f'"""{_sentence(rng, rng.randint(4, 10))}"""\n', PREAMBLE, *padding[:cut], *pieces, *padding[cut:]]
        text = "\n\n".join(part.rstrip("\n") + "\n" for part in body)
        name = f"{rng.choice(_VERBS)}_{rng.choice(_NOUNS)}_{n:04d}.py"
        (folder / name).write_text(text, encoding="utf-8")
    info = {"corpus": "B", "key": key, "seed": seed, "parts": parts, **tree_stats(target)}
    stamp.write_text(json.dumps(info))
    return info
