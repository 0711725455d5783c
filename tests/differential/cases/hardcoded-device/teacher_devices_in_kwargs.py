# differential: unsafe
"""Distillation: the teacher is kept on GPU 0 on purpose (out of the module tree, so Lightning does
not move it) while the student trains on GPU 1; the Trainer's ``devices=[1]`` sits in a settings
dict passed as ``**TRAINER``.

``x.to("cuda:0")`` feeds the teacher on its own GPU: the literal is the device meant. With
``devices=[1]`` rank 0's ``self.device`` is the second GPU, and ``self.device`` would send the
teacher's input to the wrong GPU ("Expected all tensors to be on the same device"). The rule's
page makes ``devices=[1]`` unsafe; a ``**`` it cannot read may hold exactly that, so the fix must
not be safe here either (sound by default: unknown is not safe).
"""
import lightning as L
import torch
from torch import nn

TRAINER = dict(accelerator="gpu", devices=[1], max_epochs=1)


class Distill(L.LightningModule):
    def __init__(self, teacher):
        super().__init__()
        self.student = nn.Linear(32, 10)
        self._teacher = [teacher]  # out of the module tree: Lightning does not move it

    def training_step(self, batch, batch_idx):
        x, y = batch
        with torch.no_grad():
            soft = self._teacher[0](x.to("cuda:0")).softmax(-1).to(self.device)
        return nn.functional.kl_div(self.student(x).log_softmax(-1), soft, reduction="batchmean")

    def configure_optimizers(self):
        return torch.optim.SGD(self.student.parameters(), lr=0.1)


if __name__ == "__main__":
    teacher = nn.Linear(32, 10).to("cuda:0")
    trainer = L.Trainer(strategy="ddp", **TRAINER)
    trainer.fit(Distill(teacher))
