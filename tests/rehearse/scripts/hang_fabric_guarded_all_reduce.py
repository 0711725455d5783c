# rehearse: hang
# rule: DDP005
"""Fabric, written for 4 GPUs: after each epoch only rank 0 averages the loss with
fabric.all_reduce, a collective the other ranks never enter: rank 0 waits for ever."""
import lightning as L
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main():
    fabric = L.Fabric(accelerator="cuda", devices=4, strategy="ddp")
    fabric.launch()
    fabric.seed_everything(3)
    model = nn.Linear(8, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = fabric.setup(model, optimizer)
    loader = fabric.setup_dataloaders(DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 1)), batch_size=8))
    for epoch in range(2):
        for x, y in loader:
            loss = nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            fabric.backward(loss)
            optimizer.step()
        if fabric.global_rank == 0:
            mean = fabric.all_reduce(loss, reduce_op="mean")  # rehearse: here
            fabric.print(f"epoch {epoch}: {mean.item():.4f}")


if __name__ == "__main__":
    main()
