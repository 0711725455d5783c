# differential: unsafe
"""A 4-bit model loaded in ``configure_model`` with ``device_map="cuda"`` on ``devices=[2, 3]``.

Lightning has made the rank's GPU the current device before ``configure_model`` runs, so ``"cuda"``
already loads each copy onto its own GPU (2 and 3). The per-rank map would read ``LOCAL_RANK`` (0
and 1, the ranks' indices, not their GPUs') and load onto GPUs 0 and 1 instead. Offered for review
only.
"""
import lightning as L
import torch
from transformers import AutoModelForCausalLM, BitsAndBytesConfig


class LoRAModule(L.LightningModule):
    def __init__(self, name="meta-llama/Llama-3.2-1B"):
        super().__init__()
        self.name = name

    def configure_model(self):
        self.model = AutoModelForCausalLM.from_pretrained(
            self.name, quantization_config=BitsAndBytesConfig(load_in_4bit=True), device_map="cuda"
        )

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=[2, 3], strategy="ddp", max_epochs=1)
    trainer.fit(LoRAModule())
