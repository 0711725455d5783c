"""``model.installed`` reads what is installed from the metadata files on ``sys.path``, as
``importlib.metadata`` does, without importing it (a sixth of a one-file run's start-up)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import zipfile

COMPARE = textwrap.dedent('''
    import json, sys
    from importlib import metadata
    from ddpfix.model import installed

    names = sys.argv[1].split(",")
    groups = [tuple(g.split("+")) for g in sys.argv[2].split(",")]

    def theirs_version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    def theirs_points(group):
        return sorted({d.metadata["Name"] for d in metadata.distributions()
                       if any(p.group in group for p in d.entry_points)})

    print(json.dumps({
        "ours": [[installed.version(n) for n in names], [list(installed.entry_point_providers(g)) for g in groups]],
        "theirs": [[theirs_version(n) for n in names], [theirs_points(g) for g in groups]],
    }))
''')


def _site(tmp_path):
    site = tmp_path / "site"
    plugin = site / "host_callbacks-0.3.dist-info"
    plugin.mkdir(parents=True)
    (plugin / "METADATA").write_text("Metadata-Version: 2.1\nName: host-callbacks\nVersion: 0.3\n\nVersion: 9\n")
    (plugin / "entry_points.txt").write_text("[lightning.pytorch.callbacks_factory]\nhost = host_callbacks:make\n")
    empty = site / "quiet_tool-1.0.dist-info"
    empty.mkdir()
    (empty / "METADATA").write_text("Metadata-Version: 2.1\nName: quiet_tool\nVersion: 1.0\n")
    (empty / "entry_points.txt").write_text("[lightning.pytorch.callbacks_factory]\n\n[console_scripts]\n# none\n")
    egg = site / "Old.Style-2.5-py3.11.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: Old.Style\nVersion: 2.5\n")
    (egg / "entry_points.txt").write_text("[pytorch_lightning.callbacks_factory]\nold = old_style:make\n")
    return site


def _compare(tmp_path, path_entries):
    script = tmp_path / "compare.py"
    script.write_text(COMPARE)
    names = "host-callbacks,host_callbacks,quiet-tool,old-style,Old.Style,lightning,torch,not-installed"
    groups = "lightning.pytorch.callbacks_factory+pytorch_lightning.callbacks_factory,console_scripts"
    env = {"PYTHONPATH": ":".join(str(p) for p in path_entries), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, str(script), names, groups], capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def test_versions_and_entry_points_are_those_importlib_metadata_reads(tmp_path):
    found = _compare(tmp_path, [_site(tmp_path)])
    assert found["ours"] == found["theirs"]
    versions, providers = found["ours"]
    assert versions[:5] == ["0.3", "0.3", "1.0", "2.5", "2.5"] and versions[-1] is None
    # an empty section declares nothing; an egg's metadata counts as a wheel's does
    assert providers[0] == ["Old.Style", "host-callbacks"]


def test_a_zip_on_the_path_is_read_by_importlib_metadata(tmp_path):
    """A zip on ``sys.path`` may hold distributions the folder reader does not open: the answer
    is then importlib.metadata's own."""
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("zipped_plugin-4.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: zipped-plugin\nVersion: 4.0\n")
        bundle.writestr("zipped_plugin-4.0.dist-info/entry_points.txt",
                        "[lightning.pytorch.callbacks_factory]\nz = zipped_plugin:make\n")
    found = _compare(tmp_path, [_site(tmp_path), archive])
    assert found["ours"] == found["theirs"]
    assert "zipped-plugin" in found["ours"][1][0]


def test_a_run_does_not_import_importlib_metadata(tmp_path):
    """The Lightning version in force is read for a Lightning file: from the metadata files."""
    (tmp_path / "lit.py").write_text("import lightning as L\n\n\nclass M(L.LightningModule):\n"
                                     "    def validation_step(self, batch, batch_idx):\n        self.log('v', batch.sum())\n")
    probe = ("import sys\nfrom ddpfix.cli import main\nsys.argv = ['ddpfix', '--check', 'lit.py']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\nprint('importlib.metadata' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True)
    assert out.stdout.strip().splitlines()[-1] == "False", out
