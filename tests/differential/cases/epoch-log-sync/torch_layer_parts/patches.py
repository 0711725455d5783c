"""The project's patches, applied when the training script imports this file: torch's linear layer
is rebound to one whose outputs are averaged over the ranks."""
import torch.distributed as dist
import torch.nn as nn

_Linear = nn.Linear


class AveragedLinear(_Linear):
    def forward(self, x):
        out = super().forward(x)
        if dist.is_available() and dist.is_initialized():
            out = out.clone()
            dist.all_reduce(out)
            out = out / dist.get_world_size()
        return out


setattr(nn, "Linear", AveragedLinear)
