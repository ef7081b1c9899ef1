"""Sentence vectors in the ranked index, for the hybrid mode (needs the `semantic` extra).

Vectors are computed on first use for the notes that lack one and stored in
the index next to the terms. Each note is encoded on its own, so a vector does
not depend on which other notes were encoded with it: an updated index and a
rebuilt one hold the same bytes.
"""

from __future__ import annotations

from agentmem.search import encoder, index


def similarities(idx, query: str, extra_docs) -> dict:
    """Cosine similarity of the query to every indexed note (key: num) and extra note (key: "x:<id>")."""
    if not encoder.available():
        raise encoder.missing_extra()
    import numpy as np

    _fill(idx)
    qvec = encoder.encode([query], batch_size=1)[0]
    rows = idx.conn.execute("SELECT num, vec FROM vectors WHERE model=?", (encoder.MODEL_NAME,)).fetchall()
    out: dict = {}
    if rows:
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), encoder.DIM)
        sims = mat @ qvec
        out = {r[0]: float(s) for r, s in zip(rows, sims)}
    if extra_docs:
        evecs = encoder.encode([d.text for d in extra_docs], batch_size=1)
        for d, s in zip(extra_docs, evecs @ qvec):
            out["x:" + d.id] = float(s)
    return out


def _fill(idx) -> None:
    """Encode and store the vectors of indexed notes that have none for the current model."""
    missing = idx.conn.execute(
        "SELECT d.num, d.id FROM docs d LEFT JOIN vectors v ON v.num = d.num AND v.model = ? "
        "WHERE v.num IS NULL",
        (encoder.MODEL_NAME,),
    ).fetchall()
    for start in range(0, len(missing), 256):
        chunk = []
        for num, note_id in missing[start : start + 256]:
            doc = index.read_doc(idx.ndir, note_id)
            if doc is not None:  # a note deleted meanwhile is dropped by the next sync
                chunk.append((num, doc.text))
        if not chunk:
            continue
        vecs = encoder.encode([text for _, text in chunk], batch_size=1)
        with idx.conn:
            idx.conn.execute("BEGIN IMMEDIATE")
            idx.conn.executemany(
                "INSERT OR REPLACE INTO vectors(num, model, vec) VALUES(?, ?, ?)",
                [(num, encoder.MODEL_NAME, vec.tobytes()) for (num, _), vec in zip(chunk, vecs)],
            )
