"""Property tests whose hypothesis import waits until the first one runs.

Importing hypothesis takes about a second on a busy 2-core box; with `@hypothesis.given` at
module level every collection of the suite (`pytest --collect-only`, `-k`, `-m "not slow"`)
paid for it, property tests selected or not. Here each strategy is written as a function of
the `hypothesis.strategies` module, called when the test runs:

    from tests.proptest import given, settings

    def words(st):                                  # a shared strategy: a function of `st`
        return st.text(max_size=20)

    @settings(max_examples=300, deadline=None)      # hypothesis.settings' keywords;
    @given(text=words, n=lambda st: st.integers())  # health checks by name: ["too_slow"]
    def test_something(tmp_path_factory, text, n):  # fixtures as usual, then the drawn values
        ...

At run time this is exactly `@hypothesis.settings(...)` over `@hypothesis.given(...)` on the
same function: the same strategies, examples, shrinking, database key and falsifying-example
report. Strategies are keyword-only (named after the test's parameters), so pytest is shown
the test's signature without them and supplies only the fixtures. What hypothesis's pytest
plugin adds on top is gone: its statistics and its warning about function-scoped fixtures
(which, as with `@given`, are set up once and shared by every example).
"""

from __future__ import annotations

import functools
import inspect


def given(**strategies):
    """`@hypothesis.given(name=strategy, ...)`, each strategy a function of `hypothesis.strategies`."""

    def decorate(test):
        signature = inspect.signature(test)
        unknown = set(strategies) - set(signature.parameters)
        if unknown:
            raise TypeError(f"{test.__name__} has no parameter {sorted(unknown)} to draw")

        @functools.wraps(test)
        def run(**fixtures):
            __tracebackhide__ = True
            import hypothesis
            from hypothesis import strategies as st

            options = dict(run._proptest_settings)
            checks = options.pop("suppress_health_check", ())
            if checks:
                options["suppress_health_check"] = [getattr(hypothesis.HealthCheck, name) for name in checks]
            drawn = {name: make(st) for name, make in strategies.items()}
            hypothesis.settings(**options)(hypothesis.given(**drawn)(test))(**fixtures)

        del run.__wrapped__  # pytest reads the signature below, not the test's own
        run.__signature__ = signature.replace(
            parameters=[p for name, p in signature.parameters.items() if name not in strategies])
        run._proptest_settings = {}
        return run

    return decorate


def settings(**options):
    """`@hypothesis.settings(...)` for a `given` test, applied above it; health checks by name."""

    def decorate(run):
        if not hasattr(run, "_proptest_settings"):
            raise TypeError("put @settings above @given (from tests.proptest)")
        run._proptest_settings = options
        return run

    return decorate
