"""The GAN's networks, in a file of their own (the case imports them). Their sizes come from NumPy
at build time."""
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

class Generator(nn.Module):
    def __init__(self, latent_dim, img_shape):
        super().__init__()
        self.img_shape = img_shape
        self.fc1 = nn.Linear(latent_dim, 16)
        self.fc2 = nn.Linear(16, int(np.prod(img_shape)))

    def forward(self, z):
        img = torch.tanh(self.fc2(F.leaky_relu(self.fc1(z), 0.2)))
        return img.view(img.size(0), *self.img_shape)


class Discriminator(nn.Module):
    def __init__(self, img_shape):
        super().__init__()
        self.fc1 = nn.Linear(int(np.prod(img_shape)), 16)
        self.fc2 = nn.Linear(16, 1)

    def forward(self, img):
        x = F.leaky_relu(self.fc1(img.view(img.size(0), -1)), 0.2)
        return torch.sigmoid(self.fc2(x))
