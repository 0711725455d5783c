# rehearse: divergence
# rule: DDP012
"""An unseeded torch.randperm hold-out split: each rank draws its own, so the ranks validate on
different samples (and train on each other's validation data).
(From a review of the rehearsal.)"""
import torch
import lightning as L
from torch.utils.data import DataLoader, Subset, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.cross_entropy(self.layer(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(0))
    full = TensorDataset(x, (x[:, 0] > 0).long())
    perm = torch.randperm(len(full))  # 80/20 hold-out split  # rehearse: here
    train_set, val_set = Subset(full, perm[:48].tolist()), Subset(full, perm[48:].tolist())
    print("val starts with", perm[48:52].tolist(), flush=True)
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False)
    trainer.fit(Model(), DataLoader(train_set, batch_size=8, shuffle=True), DataLoader(val_set, batch_size=8))
