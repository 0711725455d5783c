"""The training script's options and its main-process summary, in a file of their own."""
import argparse

import torch
from lightning.pytorch.callbacks import Callback

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()


def call_reporters(args, module, value):
    """Runs every `_report_*` method the class of `module` defines, with `value`."""
    for name, fn in vars(args).items():
        if name.startswith("_report_"):
            fn(module, value)


class MainProcessSummary(Callback):
    """On the main process, also reports a baseline (predicting zeros) for the last batch seen."""

    def on_validation_epoch_end(self, trainer, pl_module):
        if trainer.is_global_zero:
            call_reporters(type(pl_module), pl_module, torch.tensor(0.5))
