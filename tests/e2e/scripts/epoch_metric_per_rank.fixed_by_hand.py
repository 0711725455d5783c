"""DDP004 pattern: an epoch-level self.log in validation_step without sync_dist.

Each rank logs a different, deterministic value (10 * rank + batch_idx). Without `sync_dist=True`
the epoch value Lightning reports is rank 0's own mean; with it, the cross-rank mean.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

N_SAMPLES, BATCH_SIZE = 32, 8


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        self.log("val_rank_value", float(self.global_rank) * 10 + batch_idx, sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader():
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(N_SAMPLES, 8, generator=g), torch.randn(N_SAMPLES, 1, generator=g))
    return DataLoader(data, batch_size=BATCH_SIZE)


def main():
    L.seed_everything(7, verbose=False)
    trainer = L.Trainer(
        accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(Model(), train_dataloaders=loader(), val_dataloaders=loader())
    if trainer.is_global_zero:
        world = trainer.world_size
        batches_per_rank = N_SAMPLES // world // BATCH_SIZE  # DistributedSampler shards evenly here
        values = [10.0 * r + b for r in range(world) for b in range(batches_per_rank)]
        rank0 = values[:batches_per_rank]
        print(f"RESULT logged {trainer.callback_metrics['val_rank_value'].item():.6f}")
        print(f"RESULT expected_mean {sum(values) / len(values):.6f}")
        print(f"RESULT rank0_mean {sum(rank0) / len(rank0):.6f}")


if __name__ == "__main__":
    main()
    # Lightning leaves the process group up; tearing it down here avoids gloo's occasional
    # "terminate called without an active exception" abort at interpreter exit.
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()
