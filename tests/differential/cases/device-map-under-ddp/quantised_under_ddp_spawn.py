# differential: unsafe
"""QLoRA built in ``__init__`` (``load_in_4bit=True, device_map={"": 0}``) and trained with
``strategy="ddp_spawn"``.

The per-rank map ``{"": int(os.environ.get("LOCAL_RANK", 0))}`` is right only where the module is
built in the rank's own process. Under ``ddp_spawn`` the module is built in the launching process,
where ``LOCAL_RANK`` is unset: every copy would still load onto GPU 0 (issue 20, C). Offered for
review only (move the load into ``configure_model``).
"""
import lightning as L
import torch
from transformers import AutoModelForCausalLM


class LitLM(L.LightningModule):
    def __init__(self, name="meta-llama/Llama-3.2-1B"):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(name, load_in_4bit=True, device_map={"": 0})

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp_spawn", max_epochs=1)
    trainer.fit(LitLM(), datamodule=Instructions())
