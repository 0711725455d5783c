# differential: unsafe
"""``device_map="auto"`` in a LightningModule trained under DDP.

``"auto"`` spreads the model over every visible GPU (model parallelism, not DDP). Dropping it is
the DDP fix only if the whole model fits one GPU, which cannot be decided statically: a model that
needed the spread would run out of memory on each rank. Offered for review only; the message says
so.
"""
import lightning as L
import torch
from transformers import AutoModelForCausalLM


class LitLM(L.LightningModule):
    def __init__(self, name="meta-llama/Llama-3.1-8B"):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(name, torch_dtype=torch.bfloat16, device_map="auto")

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-5)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=4, strategy="ddp", precision="bf16-true", max_epochs=1)
    trainer.fit(LitLM(), datamodule=Instructions())
