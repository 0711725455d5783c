"""What a class's name means when the program runs, for DDP004's reading of the data handed to
Lightning: a ``match`` capture binds a name; a write into a namespace (``globals()``, ``exec``, a
frame's ``f_locals``, ``sys.modules``, ``__import__``) may bind any; an import under ``if
TYPE_CHECKING:`` binds nothing; a function's import is read only where that function reads it.
(Review helper-53: each case below made a safe fix that the run proves wrong, or would.)"""

from __future__ import annotations

import pytest

from test_results_on_the_cpu import DATA, decisions

HEAD = "import lightning as L\nimport helpers\nfrom model import Model\n\n\n"
FIT = "    runner = L.Trainer(strategy='ddp', devices=2)\n    runner.fit(Model(), datamodule={dm})\n"
LIBRARY = "from torchgeo.datamodules import EuroSATDataModule\n"
#: A ``main()`` that fits a ``Local()`` data module, and its call.
RUN_LOCAL = "def main():\n" + FIT.format(dm="Local()") + "\n\nmain()\n"
#: A module of the program that binds ``Local`` to a library's data module (whose hooks are not read).
REMOTE = {"remote.py": "from torchgeo.datamodules import EuroSATDataModule as Local\n"}


def main(body: str, dm: str = "Local()") -> str:
    return HEAD + "def main():\n" + body + FIT.format(dm=dm) + "\n\nmain()\n"


CASES = {
    # the reading that holds: a function's import, read in that function
    "a function's import read where it stands": (main("    from data import Local\n"), {}, True),
    "a function's import read in its closure": (
        HEAD + "def main():\n    from data import Local\n\n    def fit():\n" + FIT.format(dm="Local()").replace("    ", "        ")
        + "\n    fit()\n\n\nmain()\n", {}, True),
    # helper-53's false refusals: one class imported in several places is that class wherever it is read
    "the same class imported in two functions": (
        HEAD + "def check():\n    from data import Local\n    return Local\n\n\n"
        "def main():\n    from data import Local\n" + FIT.format(dm="Local()") + "\n\nmain()\n", {}, True),
    "the same class imported at the top and in a function": (
        HEAD + "from data import Local\n\n\ndef main():\n    from data import Local\n" + FIT.format(dm="Local()")
        + "\n\nmain()\n", {}, True),
    "another class imported under the name in another function": (
        HEAD + "def check():\n    from remote import Local\n    return Local\n\n\n"
        "def main():\n    from data import Local\n" + FIT.format(dm="Local()") + "\n\nmain()\n",
        REMOTE, False),
    "the imports sit in other functions only": (
        HEAD + "def check():\n    from data import Local\n    return Local\n\n\ndef again():\n"
        "    from data import Local\n    return Local\n\n\ndef main():\n" + FIT.format(dm="Local()")
        + "\n\nhelpers.install()\nmain()\n",
        {"helpers.py": "import builtins\n\nfrom torchgeo.datamodules import EuroSATDataModule\n\n\n"
                       "def install():\n    builtins.Local = EuroSATDataModule\n"}, False),
    # review helper-55: an import for type checkers binds nothing (f01); two imports that find one
    # file are that file's class (f05); a data module that keeps its parameters (f06)
    "an import for type checkers and the same in functions": (
        HEAD + "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from data import Local\n\n\n"
        "def build() -> 'Local':\n    from data import Local\n    return Local()\n\n\n"
        "def main():\n    from data import Local\n" + FIT.format(dm="Local()") + "\n\nmain()\n", {}, True),
    "a flag of the program's own that may be true": (
        HEAD + "TYPE_CHECKING = helpers.remote\n\nif TYPE_CHECKING:\n    from remote import Local\n\n\n"
        + RUN_LOCAL,
        REMOTE, False),
    "a relative import, else the same module by its name": (
        HEAD + "try:\n    from .data import Local\nexcept ImportError:\n    from data import Local\n\n\n"
        + RUN_LOCAL, {}, True),
    "a relative import, else another module": (
        HEAD + "try:\n    from .data import Local\nexcept ImportError:\n    from remote import Local\n\n\n"
        + RUN_LOCAL,
        REMOTE, False),
    "a data module that keeps its parameters": (
        main("    from data import Local\n"),
        {"data.py": DATA.replace("class Local(L.LightningDataModule):\n",
                                 "class Local(L.LightningDataModule):\n    def __init__(self, root='data', size=4):\n"
                                 "        super().__init__()\n        self.__dict__.update(locals())\n\n")}, True),
    "a data module that keeps a hook among its parameters": (
        main("    from data import Local\n"),
        {"data.py": DATA.replace("class Local(L.LightningDataModule):\n",
                                 "class Local(L.LightningDataModule):\n    def __init__(self, transfer_batch_to_device=None):\n"
                                 "        super().__init__()\n        self.__dict__.update(locals())\n\n")}, False),
    # review helper-56: a default value runs where the ``def`` stands (l1d); a data module's own
    # ``__setattr__`` (s3)
    "the file's namespace handed as a default value": (
        HEAD + LIBRARY + "from data import Local\n\n\ndef alias(name, target, namespace=locals()):\n"
        "    namespace[name] = target\n\n\nalias('Local', EuroSATDataModule)\n"
        "runner = L.Trainer(strategy='ddp', devices=2)\nrunner.fit(Model(), datamodule=Local())\n", {}, False),
    "a data module that sets a hook on itself through __setattr__": (
        main("    from data import Local\n"),
        {"data.py": DATA.replace("class Local(L.LightningDataModule):\n",
                                 "class Local(L.LightningDataModule):\n    def __init__(self, keep=False):\n"
                                 "        super().__init__()\n        if keep:\n"
                                 "            self.__setattr__('on_after_batch_transfer', helpers.keep)\n\n")
         .replace("import lightning as L\n", "import lightning as L\nimport helpers\n", 1)}, False),
    # c02/c08: a match capture rebinds the imported name
    "a sequence capture": (main("    from data import Local\n    match helpers.choice:\n        case ('geo', Local):\n"
                                "            pass\n"), {"helpers.py": LIBRARY + "choice = ('geo', EuroSATDataModule)\n"}, False),
    "a mapping capture": (main("    from data import Local\n    match helpers.config:\n        case {'datamodule': Local}:\n"
                               "            pass\n"), {"helpers.py": LIBRARY + "config = {'datamodule': EuroSATDataModule}\n"}, False),
    # c15: a capture rebinds the data module itself
    "a capture of the data module": (HEAD + "from data import Local\n\n\ndef main():\n    dm = Local()\n"
                                     "    match helpers.extra:\n        case [dm]:\n            pass\n"
                                     + FIT.format(dm="dm") + "\n\nmain()\n",
                                     {"helpers.py": LIBRARY + "extra = [EuroSATDataModule()]\n"}, False),
    # a module-level data module rebound through globals() by a function it calls
    "a global data module rebound in a function": (HEAD + LIBRARY + "import data\n\ndm = data.Local()\n\n\n"
                                                   "def swap():\n    globals()['dm'] = EuroSATDataModule()\n\n\n"
                                                   "swap()\nrunner = L.Trainer(strategy='ddp', devices=2)\n"
                                                   "runner.fit(Model(), datamodule=dm)\n", {}, False),
    "a global data module": (HEAD + "import data\n\ndm = data.Local()\n"
                             "runner = L.Trainer(strategy='ddp', devices=2)\nrunner.fit(Model(), datamodule=dm)\n", {}, True),
    # c01: the one import sits in another function; the name read here is a global set otherwise
    "an import in another function": (HEAD + LIBRARY + "\n\ndef check():\n    from data import Local\n    return Local\n\n\n"
                                      "def main():\n" + FIT.format(dm="Local()") + "\n\nglobals()['Local'] = EuroSATDataModule\n"
                                      "main()\n", {}, False),
    # c17: exec binds a global of the file
    "a global bound by exec": (HEAD + "\n\ndef check():\n    from data import Local\n    return Local\n\n\n"
                               "def main():\n" + FIT.format(dm="Local()")
                               + "\n\nexec('from torchgeo.datamodules import EuroSATDataModule as Local')\nmain()\n", {}, False),
    # c16: a class body between the use and the import reads its own namespace first
    "a class body that fills its namespace": (
        HEAD + "def main():\n    from data import Local\n\n    class Experiment:\n        locals().update(helpers.overrides)\n"
        "        L.Trainer(strategy='ddp', devices=2).fit(Model(), datamodule=Local())\n\n    return Experiment\n\n\nmain()\n",
        {"helpers.py": LIBRARY + "overrides = {'Local': EuroSATDataModule}\n"}, False),
    # the same writes through a name bound to the namespace (review of the change: not a spelling)
    "a data module file that rebinds its class through an alias of globals()": (
        main("    from data import Local\n"), {"data.py": DATA + "\n" + LIBRARY + "names = globals()\nif helpers.remote:\n"
                                                 "    names['Local'] = EuroSATDataModule\n"}, False),
    "exec given the file's namespace through a name": (
        main("    from data import Local\n"), {"data.py": DATA + "\nnames = globals()\n"
                                                 "exec(helpers.code, names)\n", "helpers.py": "code = ''\n"}, False),
    "sys.modules written through an alias": (main("    from data import Local\n"),
                                             {"helpers.py": "import sys\n\nimport remote\n\nloaded = sys.modules\n"
                                                            "loaded['data'] = remote\n",
                                              "remote.py": "from torchgeo.datamodules import EuroSATDataModule as Local\n"},
                                             False),
    "globals() and sys.modules only read": (main("    from data import Local\n"),
                                            {"data.py": DATA + "\nimport sys\nHAS_TORCHGEO = 'torchgeo' in sys.modules\n"
                                                        "NAMES = sorted(globals())\n"}, True),
    # c05/c06: the module that defines or re-exports the class rebinds it through globals()
    "a data module file that rebinds its class": (
        main("    from data import Local\n"), {"data.py": DATA + "\n" + LIBRARY + "if helpers.remote:\n"
                                                 "    globals()['Local'] = EuroSATDataModule\n"}, False),
    "a package that rebinds what it re-exports": (
        main("    from dm import Local\n"), {"dm/__init__.py": "from data import Local\n" + LIBRARY
                                             + "globals().update(Local=EuroSATDataModule)\n"}, False),
    # c04: an import only type checkers run; the package's __getattr__ answers at run time
    "a re-export for type checkers only": (
        main("    from dm import Local\n"), {"dm/__init__.py": "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
                                             "    from data import Local\n\n\ndef __getattr__(name):\n"
                                             "    from torchgeo.datamodules import EuroSATDataModule\n"
                                             "    return EuroSATDataModule\n"}, False),
    # c03/c13/c14/c07: another file swaps a module, writes a caller's names, or replaces imports
    "a module swapped in sys.modules": (main("    from data import Local\n"),
                                        {"helpers.py": "import sys\n\nimport remote\n\nsys.modules['data'] = remote\n",
                                         "remote.py": "from torchgeo.datamodules import EuroSATDataModule as Local\n"}, False),
    # lightly's tests: a module taken out of sys.modules is imported again from its own file
    "modules taken out of sys.modules": (main("    from data import Local\n"),
                                         {"helpers.py": "import sys\n\nsys.modules.pop('data', None)\n"
                                                        "del sys.modules['model']\nsys.modules.clear()\n"}, True),
    "a module put into sys.modules by setdefault": (
        main("    from data import Local\n"), {"helpers.py": "import sys\n\nimport remote\n\n"
                                                  "sys.modules.pop('data', None)\nsys.modules.setdefault('data', remote)\n",
                                                  "remote.py": "from torchgeo.datamodules import EuroSATDataModule as Local\n"},
        False),
    "a caller's f_locals written": (
        main("    from data import Local\n    helpers.prefer('Local')\n"),
        {"helpers.py": "import sys\n\n" + LIBRARY + "\n\ndef prefer(name):\n"
                       "    sys._getframe(1).f_locals[name] = EuroSATDataModule\n"}, False),
    "__import__ replaced": (main("    from data import Local\n"),
                            {"helpers.py": "import builtins\n\nimport remote\n\n_import = builtins.__import__\n\n\n"
                                           "def hooked(name, *args, **kwargs):\n"
                                           "    return remote if name == 'data' else _import(name, *args, **kwargs)\n\n\n"
                                           "builtins.__import__ = hooked\n",
                             "remote.py": "from torchgeo.datamodules import EuroSATDataModule as Local\n"}, False),
    "an import hook added": (main("    from data import Local\n"),
                             {"helpers.py": "import sys\n\nimport finders\n\nsys.meta_path.insert(0, finders.Remote())\n",
                              "finders.py": "class Remote:\n    def find_spec(self, *args):\n        return None\n"}, False),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_what_a_data_modules_name_means_when_the_program_runs(tmp_path, case):
    train, files, safe = CASES[case]
    files = {"data.py": DATA, "helpers.py": "local = True\nremote = False\n", **files}
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    found = decisions(tmp_path, "nn.functional.mse_loss(pred, y)", train, files)
    assert [f["applicability"] for f in found] == (["safe"] if safe else ["unsafe"]), (case, found)


def test_a_program_class_not_read_here_is_not_called_undefined(tmp_path):
    # (review helper-53: the reason said "the program does not define" `data.Local`, which data.py defines)
    train = main("    from data import Local\n    if helpers.local:\n        Local = helpers.Other\n")
    found = decisions(tmp_path, "nn.functional.mse_loss(pred, y)", train, {"data.py": DATA, "helpers.py": "local = True\n"})
    reason = found[0]["unsafe_reason"]
    assert "`Local` may mean more than one object here" in reason, reason
    assert "does not define" not in reason
    train = main("    from data import Local\n", "data.Local()").replace("import helpers\n", "import helpers\nimport data\n")
    files = {"data.py": DATA + "\nif helpers.local:\n    Local = helpers.Other\n", "helpers.py": "local = True\n"}
    reason = decisions(tmp_path, "nn.functional.mse_loss(pred, y)", train, files)[0]["unsafe_reason"]
    assert "`data.Local` may mean another object here than what data.py defines" in reason, reason
