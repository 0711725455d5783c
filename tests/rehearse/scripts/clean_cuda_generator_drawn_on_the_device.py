# rehearse: clean
# rule: none
"""A CUDA generator drawn from with device=x.device (CUDA on GPUs): correct there; only draws surely
on the CPU (data loading, no device) fail.
(From a review of the rehearsal.)"""
import torch
import lightning as L
from torch.utils.data import DataLoader, TensorDataset


class DenoisingModel(L.LightningModule):
    def __init__(self, sigma=0.1):
        super().__init__()
        self.net = torch.nn.Linear(8, 8)
        self.sigma = sigma

    def setup(self, stage):
        # per-rank reproducible noise, drawn directly on the GPU (the device is set when setup runs)
        self.noise_gen = torch.Generator(device="cuda")
        self.noise_gen.manual_seed(1234 + self.global_rank)

    def training_step(self, batch, batch_idx):
        (x,) = batch
        noise = torch.randn(x.shape, generator=self.noise_gen, device=x.device) * self.sigma
        loss = torch.nn.functional.mse_loss(self.net(x + noise), x)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


if __name__ == "__main__":
    x = torch.randn(64, 8, generator=torch.Generator().manual_seed(0))
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", max_epochs=3, logger=False,
                        enable_checkpointing=False)
    trainer.fit(DenoisingModel(), DataLoader(TensorDataset(x), batch_size=8))
