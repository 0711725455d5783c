import lightning as L
