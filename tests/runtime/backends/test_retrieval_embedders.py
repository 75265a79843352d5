"""Both embedders load from installed packages (no hub) and place paraphrases closer than
unrelated text, with unit-length vectors."""

from __future__ import annotations

import numpy as np
import pytest

from lynxc.runtime.backends.retrieval.embedders import get_embedder


@pytest.mark.parametrize(("name", "dimension"), [("minilm", 384), ("static", 64)])
def test_embedder(name: str, dimension: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    embedder = get_embedder(name)
    vectors = embedder.embed(["parse a config file", "read configuration files", "the weather is nice today"])
    assert vectors.shape == (3, dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.3
    assert embedder.embed([]).shape == (0, dimension)
    many = embedder.embed([f"text number {i}" for i in range(130)])  # more than one batch
    assert many.shape == (130, dimension)


def test_unknown_embedder_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown embedder 'bert'"):
        get_embedder("bert")
