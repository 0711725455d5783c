"""A stand-in for the few names of ``transformers`` that DDP008's differential cases use (see
../README.md): not the library, only the behaviour the cases rest on."""

from __future__ import annotations

import json
import os
from typing import Any

import torch
from torch import nn

__version__ = "0.0.0+ddpfix-stub"

_CONFIG = "config.json"
_WEIGHTS = "pytorch_model.bin"
_SPREAD = ("auto", "balanced", "balanced_low_0", "sequential")


class PretrainedConfig:
    model_type = ""

    def __init__(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            setattr(self, key, value)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def save_pretrained(self, folder: str) -> None:
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, _CONFIG), "w", encoding="utf-8") as handle:
            json.dump({"model_type": self.model_type, **self.to_dict()}, handle)

    @classmethod
    def from_pretrained(cls, folder: str, **kwargs: Any) -> "PretrainedConfig":
        with open(os.path.join(folder, _CONFIG), encoding="utf-8") as handle:
            data = json.load(handle)
        data.pop("model_type", None)
        data.update(kwargs)
        return cls(**data)


def _device(device_map: Any) -> torch.device:
    """Where accelerate puts a whole model for ``device_map``."""
    if isinstance(device_map, dict):
        if set(device_map) != {""}:
            raise NotImplementedError("the stub places whole models only: device_map={'': device}")
        device_map = device_map[""]
    if isinstance(device_map, str) and device_map in _SPREAD:
        return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
    if isinstance(device_map, int):
        if not torch.cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        return torch.device("cuda", device_map)
    return torch.device(device_map)


class PreTrainedModel(nn.Module):
    config_class: type[PretrainedConfig] = PretrainedConfig

    def __init__(self, config: PretrainedConfig, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.config = config

    def post_init(self) -> None:
        pass

    def save_pretrained(self, folder: str) -> None:
        self.config.save_pretrained(folder)
        torch.save(self.state_dict(), os.path.join(folder, _WEIGHTS))

    @classmethod
    def from_pretrained(cls, folder: str, *args: Any, device_map: Any = None, load_in_8bit: bool = False,
                        load_in_4bit: bool = False, quantization_config: Any = None, **kwargs: Any) -> "PreTrainedModel":
        if load_in_8bit or load_in_4bit or quantization_config is not None:
            raise RuntimeError("8-/4-bit loading needs bitsandbytes on a CUDA GPU")
        model = cls(cls.config_class.from_pretrained(folder))
        model.load_state_dict(torch.load(os.path.join(folder, _WEIGHTS), weights_only=True), strict=True)
        model.eval()
        if device_map is not None:
            device = _device(device_map)
            model.to(device)  # "Torch not compiled with CUDA enabled" on a CPU-only build
            model.hf_device_map = {"": str(device)}

            def align(module: nn.Module, args: tuple, kwargs: dict) -> tuple:
                move = lambda v: v.to(device) if isinstance(v, torch.Tensor) else v  # noqa: E731
                return tuple(move(a) for a in args), {k: move(v) for k, v in kwargs.items()}

            model.register_forward_pre_hook(align, with_kwargs=True)
        return model
