# differential: safe
"""Feature scaling and mixing written with device-less constant factories in ``training_step``:
``x * torch.ones(x.shape[1])``, ``x - torch.full((x.shape[1],), 0.5)``, ``x @ torch.eye(x.shape[1])``
and ``torch.zeros(x.shape[0], 1) + y``.

Each factory's only use is ``+ - * @`` with a tensor of the batch Lightning moved to the rank's
device; none is random, each dtype is float32, and the Trainer is a literal DDP one on GPUs 0..n-1
(``devices`` left out): adding ``device=self.device`` is safe. On the CPU every number must stay
the original's.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import probe


class Mixer(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(5, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        scaled = x * torch.ones(x.shape[1])
        centred = x - torch.full((x.shape[1],), 0.5)
        mixed = x @ torch.eye(x.shape[1])
        target = torch.zeros(x.shape[0], 1) + y
        loss = nn.functional.smooth_l1_loss(self.net(scaled * centred + mixed), target)
        self.log("train_loss", loss, on_step=True, on_epoch=True, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)


if __name__ == "__main__":
    L.seed_everything(13, verbose=False)
    g = torch.Generator().manual_seed(3)
    x = torch.rand(40, 5, generator=g)
    y = (x * torch.tensor([0.5, -1.0, 2.0, 0.0, 1.0])).sum(dim=1, keepdim=True)
    model = Mixer()
    trainer = L.Trainer(
        strategy="ddp",
        max_epochs=2,
        deterministic=True,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=probe.out_dir(),
    )
    trainer.fit(model, DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True))
    probe.record(trainer, model)
    probe.finish()
