# differential: unsafe
"""A LightningModule in a file of its own (``model.py``) loads its backbone with
``device_map="cuda"``; the Trainer is built elsewhere.

Trained in one process on one GPU the map is harmless and may be what is meant (a model placed at
load time, never moved); only under DDP must it go. This file does not say how the module is
trained: the fix is offered for review only.
"""
import lightning as L
import torch
from transformers import AutoModelForSequenceClassification


class Classifier(L.LightningModule):
    def __init__(self, name="distilbert-base-uncased"):
        super().__init__()
        self.model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=3, device_map="cuda")

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=2e-5)
