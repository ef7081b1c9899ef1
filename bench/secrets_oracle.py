"""Our credential scanner beside detect-secrets (the oracle in the test extra) on the generated corpus.

Both read the same samples (tests/secrets_corpus.py and tests/secrets_corpus_field.py: credential forms and
look-alikes, material generated from a fixed seed). Prints how many forms each flags and how many look-alikes,
then every disagreement with its reason (tests/secrets_oracle_reasons.py), as markdown for
docs/benchmarks.md. tests/test_secrets_oracle.py fails if the figures and the lists stop agreeing.

Run: python bench/secrets_oracle.py [--seed N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import secrets_corpus  # noqa: E402
from tests import secrets_oracle_reasons as reasons  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=secrets_corpus.SEED)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    c = reasons.compare(secrets_corpus.credentials(args.seed), secrets_corpus.benign(args.seed))
    took = time.perf_counter() - start
    forms, looks = len(c.credentials), len(c.benign)
    print(f"| | credential forms flagged (of {forms}) | look-alikes flagged (of {looks}) |")
    print("|---|---|---|")
    print(f"| agentmem | {len(c.we_found(c.credentials))} | {len(c.we_found(c.benign))} |")
    print(f"| detect-secrets | {len(c.oracle_found(c.credentials))} | {len(c.oracle_found(c.benign))} |")
    print(f"\n(seed {args.seed}; both scanners over every sample in {took:.1f} s; strings detect-secrets flags in a "
          f"form that we do not: {len(c.unmatched())})\n")
    print("Forms detect-secrets does not flag, by reason (family: samples missed):\n")
    by_reason: dict[str, dict[str, int]] = {}
    for s in c.missed_by_oracle():
        reason = reasons.reason_missed(s) or "NO REASON LISTED"
        family = "every family's backslash-split form" if reason == reasons.SPLIT else s.family
        families = by_reason.setdefault(reason, {})
        families[family] = families.get(family, 0) + 1
    for reason, families in by_reason.items():
        listed = ", ".join(f"{f} ({n})" for f, n in families.items())
        print(f"- {reason}. {listed}.")
    print("\nLook-alikes detect-secrets flags, by form (plugin): why it is not a credential:\n")
    for (form, plugin), n in sorted(c.benign_flags().items()):
        print(f"- {form} ({plugin}), {n} of the form: {reasons.BENIGN_FLAGS.get((form, plugin), 'NO REASON LISTED')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
