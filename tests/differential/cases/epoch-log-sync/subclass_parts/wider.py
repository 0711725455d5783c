"""A variant of the module, in a file of its own: the one the script trains."""
import torch
from subclass_in_another_file import Classifier


class Wider(Classifier):
    def on_validation_epoch_end(self):
        self.log("val_epoch", torch.tensor(float(self.current_epoch), device=self.device), sync_dist=True)
