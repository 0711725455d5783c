# differential: unsafe
"""QLoRA under DDP on GPUs 2 and 3, with the Trainer's settings in a dict passed as ``**TRAINER``
(``devices=[2, 3]`` among them) and the model loaded with ``load_in_4bit=True, device_map={"": 0}``.

With ``devices=[2, 3]`` ``LOCAL_RANK`` is the rank's index (0, 1), not its GPU's: the per-rank map
``{"": int(os.environ.get("LOCAL_RANK", 0))}`` would load the copies onto GPUs 0 and 1 while
Lightning trains on 2 and 3. The rule's page makes such ``devices`` unsafe; a ``**`` ddpfix cannot
read may hold them, so the fix must not be safe here either (sound by default).
"""
import lightning as L
import torch
from transformers import AutoModelForCausalLM

TRAINER = dict(accelerator="gpu", devices=[2, 3], precision="bf16-mixed", max_epochs=1)


class LitLM(L.LightningModule):
    def __init__(self, name="meta-llama/Llama-3.2-1B"):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=True, device_map={"": 0})

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    trainer = L.Trainer(strategy="ddp", **TRAINER)
    trainer.fit(LitLM(), datamodule=Instructions())
