"""The project's patches, applied when the training script imports this file (after it has defined
its classes): the script's `Head._project` is replaced by one that averages the projection over the
ranks."""
import torch.distributed as dist

from __main__ import Head

_project = Head._project


def _averaged_project(self, x):
    out = _project(self, x)
    if dist.is_available() and dist.is_initialized():
        out = out.clone()
        dist.all_reduce(out)
        out = out / dist.get_world_size()
    return out


Head._project = _averaged_project
