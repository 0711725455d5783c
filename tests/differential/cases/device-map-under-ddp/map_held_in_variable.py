# differential: unsafe
"""The device map is a constructor argument (``device_map=device_map``), set by whoever builds the
module.

ddpfix cannot read the value. The finding says that dropping the map is the real fix; the offered
edit (``x = x.to(self.device)`` for each tensor input at the top of ``forward``) does not remove
accelerate's hooks, which still send the inputs where the map says: for review only.
"""
import lightning as L
import torch
from transformers import AutoModelForSequenceClassification


class Classifier(L.LightningModule):
    def __init__(self, name, device_map):
        super().__init__()
        self.model = AutoModelForSequenceClassification.from_pretrained(name, device_map=device_map)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor):
        return self.model(input_ids=input_ids, attention_mask=attention_mask).logits

    def training_step(self, batch, batch_idx):
        logits = self(batch["input_ids"], batch["attention_mask"])
        return torch.nn.functional.cross_entropy(logits, batch["labels"])

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=2e-5)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(Classifier("bert-base-uncased", device_map="cuda"), datamodule=Reviews())
