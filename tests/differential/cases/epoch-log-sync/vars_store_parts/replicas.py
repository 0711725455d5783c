"""The project's helpers for replicas: a wrapper that averages a module's predictions over them."""
import torch.distributed as dist


def averaged(module):
    """Wraps a module's forward so that its predictions are averaged over the replicas."""
    forward = module.forward

    def run(x):
        out = forward(x)
        if dist.is_available() and dist.is_initialized():
            out = out.clone()
            dist.all_reduce(out)
            out = out / dist.get_world_size()
        return out

    vars(module).update(forward=run)
    return module
