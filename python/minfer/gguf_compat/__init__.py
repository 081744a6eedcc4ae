"""gguf-py compatibility (being written)."""
