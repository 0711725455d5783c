"""ddpfix: find and fix the PyTorch Lightning DDP pitfalls that make training scripts crash or hang."""

__version__ = "0.1.0"
