"""DDP002's proof obligations that cross files: the run's default-device switches (which mean
something only where the run read the whole project: ``ProjectFacts.whole``).

A default device of CUDA (``torch.set_default_device("cuda")``, a CUDA default tensor type, a
``with torch.device("cuda"):`` block, Lightning's ``init_module()``) makes samplers draw on CUDA: there a
CUDA generator is what works, and a CPU one fails with "Expected a 'cuda' device type for generator but
found 'cpu'". The switch may stand in any file of the program, so the fix is proven only where the run
read the whole project and found none.
"""

from __future__ import annotations

import os

from ddpfix.facts import DeviceSwitch, ProjectFacts

#: Switches named in a message, at most.
SHOWN = 3

def describe(switch: DeviceSwitch, here: str) -> str:
    """``torch.set_default_device(...) (line 3)`` in this file, ``(train.py:3)`` in another, its path
    relative to this file's folder where it lies below it, else to the current folder where it lies
    below that, else whole."""
    real = os.path.realpath(here)
    if not switch.line:
        return switch.what  # a switch no line holds (code from outside the program): its text says where
    if switch.path == real:
        return f"{switch.what} (line {switch.line})"
    relative = os.path.relpath(switch.path, os.path.dirname(real))
    if relative.startswith(".."):  # above this file's folder: as the run's paths are shown, from here
        relative = os.path.relpath(switch.path)
    shown = switch.path if relative.startswith("..") else relative
    return f"{switch.what} ({shown.replace(os.sep, '/')}:{switch.line})"


def switches_text(switches: tuple[DeviceSwitch, ...], here: str) -> str:
    shown = ", ".join(describe(switch, here) for switch in switches[:SHOWN])
    more = len(switches) - SHOWN
    return shown + (f" and {more} more" if more > 0 else "")


def blocking_switch(switches: tuple[DeviceSwitch, ...], here: str) -> bool:
    """A switch of the whole process to a literal CUDA device in this very file: the sampler's draws
    are on CUDA there, and a CPU generator fails for everyone."""
    real = os.path.realpath(here)
    return any(s.cuda and not s.scoped and s.path == real for s in switches)
