# rehearse: clean
# rule: none
"""Lightning's advice: test with Trainer(devices=1) after DDP training (on rank 0): one device asked
for stays one device.
(From a review of the rehearsal.)"""
import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 2)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_acc", (self.layer(x).argmax(1) == y).float().mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader(n, seed):
    x = torch.randn(n, 8, generator=torch.Generator().manual_seed(seed))
    return DataLoader(TensorDataset(x, (x[:, 0] > 0).long()), batch_size=8)


if __name__ == "__main__":
    L.seed_everything(0)
    model = Model()
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False)
    trainer.fit(model, loader(64, 0))
    # Lightning's advice: test on one device, so that DistributedSampler's padding duplicates no sample
    if trainer.is_global_zero:
        tester = L.Trainer(accelerator="gpu", devices=1, logger=False)
        print(tester.test(model, loader(40, 1)))
