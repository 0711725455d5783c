"""The project's patches, applied when the training script imports this file (after it has defined
its classes): the script's `Head` is rebound to a head whose predictions are averaged over the
ranks."""
import __main__ as train
import torch.distributed as dist
from torch import nn


class AveragedHead(nn.Module):
    """The head with its predictions averaged over the ranks (an ensemble of the replicas)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, x):
        out = self.fc(x)
        if dist.is_available() and dist.is_initialized():
            out = out.clone()
            dist.all_reduce(out)
            out = out / dist.get_world_size()
        return out


for name, replacement in {"Head": AveragedHead}.items():
    setattr(train, name, replacement)
