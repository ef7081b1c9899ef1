"""Regular expressions compiled on first use, not when their module is imported.

`re` compiles in Python: a small pattern costs 0.3-0.9 million instructions (0.1-0.3 ms), one with
a wide character class several times that. A search compiled fifteen module-level patterns of ours at
import and used five (docs/benchmarks.md, "Issue Y's per-turn path"). `compile` gives a stand-in that behaves as
the compiled pattern (`match`, `fullmatch`, `search`, `sub`, `findall`, `pattern`, ...) and compiles it
the first time any of those is asked for. Each attribute is then kept on the stand-in itself, so a later
`NAME.match(...)` costs what it would on the compiled pattern. It is not an `re.Pattern`: where an `re`
function or an isinstance check wants one, give it `re.compile(NAME.pattern)`.
"""

import re


class _Deferred:
    """A pattern's source and flags, compiled when an attribute of the compiled pattern is first asked for."""

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags

    def __getattr__(self, name: str) -> object:  # only for attributes not yet on the instance
        if name.startswith("_"):
            raise AttributeError(name)
        compiled = self.__dict__.get("_compiled")
        if compiled is None:
            compiled = self.__dict__["_compiled"] = re.compile(self._source, self._flags)
        value = getattr(compiled, name)
        self.__dict__[name] = value  # asked once: later look-ups find it here, as fast as on the pattern
        return value

    def __repr__(self) -> str:
        return f"patterns.compile({self._source!r})"


def compile(source: str, flags: int = 0) -> "re.Pattern[str]":  # noqa: A001 - stands in for re.compile
    """`re.compile(source, flags)`, done the first time the pattern is used."""
    return _Deferred(source, flags)  # type: ignore[return-value]
