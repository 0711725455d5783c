# differential: unchanged
"""The script makes CUDA the default device (``torch.set_default_device("cuda")``) and shuffles
with a CUDA generator: working code on a GPU.

With a CUDA default device the sampler's ``torch.randperm`` draws on the GPU and *needs* the CUDA
generator; a CPU one fails with "Expected a 'cuda' device type for generator but found 'cpu'". This
was the shape of every real public file with this pitfall (issue 20, C). Dropping the device alone
breaks the program: the rule must report both lines (the generator and the switch) and fix nothing.
"""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


class Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    torch.set_default_device("cuda")
    L.seed_everything(0, verbose=False)
    x = torch.randn(64, 8)
    data = TensorDataset(x, x.sum(dim=1, keepdim=True))
    loader = DataLoader(data, batch_size=8, shuffle=True, generator=torch.Generator(device="cuda").manual_seed(0))
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Model(), loader)
