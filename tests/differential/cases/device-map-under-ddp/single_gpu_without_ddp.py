# differential: unchanged
"""Fine-tuning on one GPU (``devices=1``, no DDP strategy) with ``device_map="cuda"``.

In one process the device map is harmless (the model is placed once, on the one GPU Lightning
uses too): not this rule's business, nothing to report or change.
"""
import lightning as L
import torch
from transformers import AutoModelForSequenceClassification


class Classifier(L.LightningModule):
    def __init__(self, name="distilbert-base-uncased"):
        super().__init__()
        self.model = AutoModelForSequenceClassification.from_pretrained(name, num_labels=2, device_map="cuda")

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=2e-5)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=1, max_epochs=1)
    trainer.fit(Classifier(), datamodule=Reviews())
