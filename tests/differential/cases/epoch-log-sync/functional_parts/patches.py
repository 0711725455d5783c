"""The project's patches, applied when the training script imports this file: torch's functional
`mse_loss` is rebound to one that averages the loss over the ranks where no gradient is taken."""
import torch
import torch.distributed as dist
import torch.nn.functional as F

_mse_loss = F.mse_loss


def averaged_mse_loss(input, target, *args, **kwargs):
    loss = _mse_loss(input, target, *args, **kwargs)
    if dist.is_available() and dist.is_initialized() and not torch.is_grad_enabled():
        loss = loss.clone()
        dist.all_reduce(loss)
        loss = loss / dist.get_world_size()
    return loss


F.mse_loss = averaged_mse_loss
