"""Ray Train's train.huggingface: transformers' Trainer in a TorchTrainer's
ranks (train.huggingface.transformers)."""
