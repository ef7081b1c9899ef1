"""`agentmem sync` at close to the disk's pace (issue W, item 3): a sync reads the store's next batch while it
screens and writes this one, and screening many notes builds each pattern once (docs/benchmarks.md)."""

from __future__ import annotations

from agentmem.safety import credentials, tokens


def test_screening_many_notes_builds_each_separators_pattern_once(monkeypatch):
    # A sync screens every note it caches (INV no-credentials); the patterns' sources were rebuilt for each
    # note, a third of a clean note's screening (docs/benchmarks.md)
    built: list[str] = []
    real = tokens._pass_pattern
    monkeypatch.setattr(tokens, "_pass_pattern", lambda sep: built.append(sep) or real(sep))
    texts = [f"note {i}: see foo_bar-baz.qux:{i}~A and ghp_{'x' * 4}" for i in range(20)]
    for text in texts:
        credentials.scan(text)
    assert len(built) == len(set(built)) <= len(tokens.PASSES)
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cD1fG3hJ5"
    assert [f.kind for f in credentials.scan(f"token {token} here")] == ["github-token"]
