# differential: unsafe
"""An 8-bit model loaded with ``device_map="auto"`` in a script started by ``srun`` (it reads
``SLURM_JOB_ID`` to name its output).

Under SLURM the processes are started by srun, which sets ``SLURM_LOCALID``, not ``LOCAL_RANK``:
the per-rank map ``{"": int(os.environ.get("LOCAL_RANK", 0))}`` would load every copy onto GPU 0
(issue 20, C). A file that names SLURM gets the fix for review only.
"""
import os

import lightning as L
import torch
from transformers import AutoModelForCausalLM


class LitLM(L.LightningModule):
    def __init__(self, name="facebook/opt-1.3b"):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(name, load_in_8bit=True, device_map="auto")

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


if __name__ == "__main__":
    run = os.environ.get("SLURM_JOB_ID", "local")
    trainer = L.Trainer(accelerator="gpu", devices=4, num_nodes=2, strategy="ddp", default_root_dir=f"runs/{run}")
    trainer.fit(LitLM(), datamodule=Instructions())
