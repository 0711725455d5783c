"""Another example of the repository: a streaming dataset, which Lightning does not shard. It runs
in its own process, never with the regressor's script."""
import torch
from torch.utils.data import IterableDataset


class Counting(IterableDataset):
    def __iter__(self):
        return iter(torch.arange(8).float())


if __name__ == "__main__":
    print(sum(Counting()))
