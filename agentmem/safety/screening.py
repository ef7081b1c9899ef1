"""What agentmem does with credentials found in what it writes and prints (the scanner: `credentials.py`).

- `screen`: the fields of a note about to be saved (`memory/save.py`, the one save path): refuse, or with
  `--redact` replace; identifiers and key blocks whose extent is unknown are refused even then.
- `withhold`: text about to be printed that echoes what someone typed (a search query, an error message).
- `refuse_argument`: an argument that is used as an identifier (a note ID, `--project`): refused unseen.

INV no-credentials.
"""

from __future__ import annotations

from agentmem.errors import NextStep, Option, SecretFound
from agentmem.safety.credentials import env_secrets, raise_for, redact, scan

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (a few ms per start)
if TYPE_CHECKING:
    from collections.abc import Collection


def screen(fields: dict, *, redact_found: bool = False, known: tuple[str, ...] | list[str] = (),
           fixed: Collection[str] = ()) -> tuple[dict, list[dict]]:
    """Check named fields (a string, a list of strings, or None) for credentials.

    Multi-line text is reported by line ("line 3"), one-line fields by name
    ("title", "tag 2"). Without `redact_found` any finding raises SecretFound;
    with it, returns the fields redacted and what was replaced ({"where", "kind"}).
    Fields named in `fixed` (identifiers: a note ID, a project) are refused even
    with `redact_found`: a redacted identifier would name nothing.
    """
    places: list[str] = []
    refused: list[list[str | Option]] = []  # each: words, and the option it names (as data)
    replaced: list[dict] = []
    out: dict = {}
    for name, value in fields.items():
        items = value if isinstance(value, list) else [value]
        cleaned = []
        for i, item in enumerate(items):
            if not item:
                cleaned.append(item)
                continue
            label = f"{name} {i + 1}" if isinstance(value, list) else name
            findings = scan(item, known)
            for f in findings:
                where = f"line {f.line}" if name == "body" else label
                places.append(f"{where}: {f.name} ({f.kind})")
                replaced.append({"where": where, "kind": f.kind})
                if name in fixed:
                    refused.append([f"{places[-1]}, which cannot be redacted: it is an identifier"])
                elif not f.redactable:
                    refused.append([f"{places[-1]}, which ", Option("redact"), " cannot bound: where the key starts "
                                    "or ends is unknown"])
            ok = redact_found and findings and name not in fixed and all(f.redactable for f in findings)
            cleaned.append(redact(item, known) if ok else item)
        out[name] = cleaned if isinstance(value, list) else cleaned[0]
    if refused and (redact_found or len(refused) == len(places)):
        said: list[str | Option] = ["refusing to save: "]
        for i, pieces in enumerate(refused[:5]):
            said += ["; "] * bool(i) + pieces
        raise SecretFound(NextStep.of(*said, "; nothing was written"), hint="remove the credential and save again")
    if places and not redact_found:
        raise_for(places)
    return out, replaced


def withhold(text: str, known: tuple[str, ...] | list[str] = ()) -> tuple[str, list[str]]:
    """`text` fit to print: each credential replaced by `[REDACTED:<kind>]` (all of it if that cannot be done
    safely), and the kinds withheld. For echoing what a person or an agent typed (a query, an ID)."""
    findings = scan(text, known)
    if not findings:
        return text, []
    kinds = [f.kind for f in findings]
    try:
        return redact(text, known), kinds
    except SecretFound:
        return f"[REDACTED:{kinds[0]}]", kinds


def refuse_argument(value: str | None, what: str, action: str) -> None:
    """Raise SecretFound, without echoing it, if an argument (`--project`, a note ID) holds a credential."""
    if not value:
        return
    findings = scan(value, env_secrets())
    if findings:
        f = findings[0]
        raise SecretFound(f"refusing to {action}: {what} holds {f.name} ({f.kind}); it is not shown here and "
                          "nothing was looked up or written", hint="pass the intended value, not a credential")
