# differential: unsafe
"""After DDP training, rank 0 alone reloads the fine-tuned model with ``device_map="cuda:0"`` and
generates from inputs it sends to ``cuda:0`` (issue 20, C: every ``from_pretrained(device_map=...)``
of a DDP file was once rewritten, this reload included).

That load is not the model trained under DDP: one process, and the inputs go where the map puts
the model. Without the map it stays on the CPU while its inputs are on GPU 0. The training load
(in ``__init__``) has no map. The reload's fix is offered for review only.
"""
import lightning as L
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


class LitLM(L.LightningModule):
    def __init__(self, name):
        super().__init__()
        self.model = AutoModelForCausalLM.from_pretrained(name)

    def training_step(self, batch, batch_idx):
        return self.model(**batch).loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-5)


if __name__ == "__main__":
    module = LitLM("gpt2")
    trainer = L.Trainer(accelerator="gpu", devices=2, strategy="ddp", max_epochs=1)
    trainer.fit(module, datamodule=TextData())
    if trainer.is_global_zero:
        module.model.save_pretrained("out/hf")
        tuned = AutoModelForCausalLM.from_pretrained("out/hf", device_map="cuda:0")
        ids = AutoTokenizer.from_pretrained("gpt2")("Hello", return_tensors="pt").input_ids
        print(tuned.generate(ids.to("cuda:0"), max_new_tokens=8))
