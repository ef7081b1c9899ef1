"""The encoder's faster arithmetic gives the vectors of its plain formulas, bit for bit, without page faults.

Stored vectors are compared across machines and index histories (an updated index and a rebuilt one hold
the same bytes), so a change to how the encoder computes must not move a single bit. `_plain_batch` below
is the encoder as first written (2026-12-01): each formula as one numpy expression. The encoder now works
in place, in blocks and with buffers the allocator keeps (docs/benchmarks.md, "Embedding without page
faults"); these tests hold it to the plain formulas' bytes, on whatever machine and BLAS the suite runs.
"""

from __future__ import annotations

import math
import os
import resource
import string

import pytest

from agentmem.search import encoder, vectors
from tests.test_encoder_reference import TEXTS, require_semantic_extra


def _plain_layer_norm(w, x, prefix):
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * w[prefix + ".weight"] + w[prefix + ".bias"]


def _plain_dense(enc, x, prefix):
    flat = x.reshape(-1, x.shape[-1]) @ enc.wt[prefix]
    return flat.reshape(*x.shape[:-1], flat.shape[-1]) + enc.w[prefix + ".bias"]


def _plain_erf(x):
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _plain_batch(enc, texts):
    import numpy as np

    ids = [enc.tokenizer.ids(t) for t in texts]
    length = max(len(i) for i in ids)
    tok = np.zeros((len(ids), length), dtype=np.int64)
    mask = np.zeros((len(ids), length), dtype=np.float32)
    for row, seq in enumerate(ids):
        tok[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1.0
    w = enc.w
    x = (w["embeddings.word_embeddings.weight"][tok] + w["embeddings.position_embeddings.weight"][:length]
         + w["embeddings.token_type_embeddings.weight"][0])
    x = _plain_layer_norm(w, x, "embeddings.LayerNorm")
    bias = (1.0 - mask)[:, None, None, :] * -1e9
    batch, head_dim = len(ids), encoder.DIM // 12
    scale = 1.0 / math.sqrt(head_dim)
    for n in range(6):
        p = f"encoder.layer.{n}."

        def heads(t):
            return t.reshape(batch, length, 12, head_dim).transpose(0, 2, 1, 3)

        q = heads(_plain_dense(enc, x, p + "attention.self.query"))
        k = heads(_plain_dense(enc, x, p + "attention.self.key"))
        v = heads(_plain_dense(enc, x, p + "attention.self.value"))
        att = q @ k.transpose(0, 1, 3, 2) * scale + bias
        att = np.exp(att - att.max(-1, keepdims=True))
        att /= att.sum(-1, keepdims=True)
        ctx = (att @ v).transpose(0, 2, 1, 3).reshape(batch, length, encoder.DIM)
        x = _plain_layer_norm(w, x + _plain_dense(enc, ctx, p + "attention.output.dense"),
                              p + "attention.output.LayerNorm")
        h = _plain_dense(enc, x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + _plain_erf(h * math.sqrt(0.5)))
        x = _plain_layer_norm(w, x + _plain_dense(enc, h, p + "output.dense"), p + "output.LayerNorm")
    pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True) + 1e-12
    return pooled.astype(np.float32)


def _words(n, seed):
    import random

    rng = random.Random(seed)
    return " ".join("".join(rng.choice("bcdfghjklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(1, 4)))
                    for _ in range(n))


# Batches as notes make them: one passage, several padded to the longest, lengths that are not a multiple of
# anything (one BLAS kernel's edge cases), the reference texts (accents, CJK, long words, truncation).
BATCHES = [
    [TEXTS[name] for name in sorted(TEXTS)][:8],
    [TEXTS[name] for name in sorted(TEXTS)][8:16],
    ["Deploy notes\n" + _words(60, 1)],
    ["Deploy notes\n" + _words(61, 2), "Deploy notes\n" + _words(7, 3), "Deploy notes\n" + _words(33, 4)],
    ["x"],
    ["A heading\n" + _words(n, n) for n in (5, 17, 29, 41, 53, 65, 77, 200)],
]


@pytest.fixture(scope="module")
def model():
    require_semantic_extra(need_numpy=True)
    return encoder._encoder()


@pytest.mark.parametrize("batch", range(len(BATCHES)))
def test_the_encoder_gives_the_same_bits_as_its_plain_formulas(model, batch):
    texts = BATCHES[batch]
    assert model.encode_batch(texts).tobytes() == _plain_batch(model, texts).tobytes()


def test_a_notes_stored_vectors_are_the_same_bytes_as_from_the_plain_formulas(model):
    # two batches of passages (encode_note), then quantised: the bytes the index stores
    import numpy as np

    title, body = "Checkpoint", "\n".join(_words(25, line) for line in range(30))  # several passages, two batches
    found = vectors.note_passages(title, body)
    texts = [p.text for p in found]
    assert len(texts) > encoder._NOTE_BATCH
    plain = np.concatenate([_plain_batch(model, texts[i : i + encoder._NOTE_BATCH])
                            for i in range(0, len(texts), encoder._NOTE_BATCH)])
    comps, scales = vectors._quantize(plain)
    doc = type("Doc", (), {"title": title, "body": body})()
    _, got_comps, got_scales, got_resid = vectors._encode_doc(doc)
    assert got_comps.tobytes() == comps.tobytes() and got_scales.tobytes() == scales.tobytes()
    assert got_resid.tobytes() == vectors._residuals(plain, comps, scales).tobytes()


def test_the_ascii_split_of_words_is_the_general_one():
    printable = string.printable + "".join(map(chr, range(32))) + "\x7f"
    texts = ["Don't stop: e-mail ME@x.org, now!\tTab\x0cfeed\x00nul\x1fend\r\n", printable, printable[::-1],
             *("".join(printable[(i * 7 + j * 13) % len(printable)] for j in range(50)) for i in range(200))]
    for text in texts:
        assert text.isascii()
        assert encoder._basic_words(text) == encoder._basic_words_any(text), repr(text)


def _glibc() -> bool:
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError):  # no confstr (Windows), or no such name (macOS, musl)
        return False


@pytest.mark.skipif(not _glibc(), reason="glibc's allocator only")
def test_encoding_batch_after_batch_does_not_fault_its_memory_in_again(model):
    texts = ["A heading\n" + _words(120, n) for n in range(8)]  # a full batch of 128-piece passages
    model.encode_batch(texts)  # the first batch grows the heap
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(3):
        model.encode_batch(texts)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    # Given back to the kernel after each batch, its arrays were faulted in again: ~27,000 faults a batch.
    assert faults < 1500, faults
