"""The module-level half of the runtime contract: what each `runtimes/<name>.py` states as its `SPEC`.

`Spec` is what the per-turn hook (hooks/dispatch.py) reads, with no runtime object built and no
other module imported: the CLI's name, how a reminder is printed, whether and how its stop hook
asks for one more turn, whether it has a pre-tool-use hook that can approve a command, and its
plain non-interactive mode (the README's table). Every member is there in every module: an
optional capability is None where the CLI lacks it, never an absent attribute, so no caller
needs `getattr` with a default. `Spec.runtime` is the class bound to an environment
(runtimes/base.py, `Runtime`), which registry.py builds.

The per-turn hook imports this module, so it imports nothing, and the classes are written by
hand (`dataclasses` would pull in `inspect` and `re`): frozen once made, compared by value.
"""

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from agentmem.runtimes.base import Runtime


class _Frozen:
    """Slots set once by the constructor; equal when every slot is."""

    __slots__: "tuple[str, ...]" = ()

    def _fill(self, **values: object) -> None:
        for key, value in values.items():
            object.__setattr__(self, key, value)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen: {key} cannot be set")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, k) for k in self.__slots__))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"


class DefaultMode(_Frozen):
    """What the CLI's plain non-interactive mode does with the helper, with no flags and with
    `[trust] projects` on (proved per CLI by tests/test_e2e_default_mode.py)."""

    __slots__ = ("command", "saves", "searches", "trusted_saves", "trusted_searches", "otherwise")
    command: "str"  # e.g. "codex exec"
    saves: "bool"
    searches: "bool"
    trusted_saves: "bool"
    trusted_searches: "bool"
    otherwise: "str"  # what it needs otherwise, as the README says it

    def __init__(self, *, command: "str", saves: "bool", searches: "bool", trusted_saves: "bool",
                 trusted_searches: "bool", otherwise: "str") -> None:
        self._fill(command=command, saves=saves, searches=searches, trusted_saves=trusted_saves,
                   trusted_searches=trusted_searches, otherwise=otherwise)


class Reflection(_Frozen):
    """How the CLI's stop hook asks for the end-of-session turn (hooks/reflect.py)."""

    __slots__ = ("how", "continue_shape")
    how: "str"  # named in reports: "Stop hook, decision block"
    continue_shape: "Callable[[str], dict]"  # the JSON object that makes the CLI continue with the reason

    def __init__(self, *, how: "str", continue_shape: "Callable[[str], dict]") -> None:
        self._fill(how=how, continue_shape=continue_shape)


class Approval(_Frozen):
    """A pre-tool-use hook whose answer approves a command (`agentmem hook approve`, hooks/approve.py)."""

    __slots__ = ("shell_call", "shape")
    # The CLI's hook input read as a shell command: (command, working folder), or None for any other call.
    shell_call: "Callable[[dict], tuple[str, str] | None]"
    shape: "Callable[[str], dict]"  # what the hook prints to approve the call, with the reason

    def __init__(self, *, shell_call: "Callable[[dict], tuple[str, str] | None]",
                 shape: "Callable[[str], dict]") -> None:
        self._fill(shell_call=shell_call, shape=shape)


class Spec(_Frozen):
    """One agent CLI, as its module states it."""

    __slots__ = ("name", "title", "runtime", "default_mode", "reminder_shape", "reflection", "no_reflection",
                 "approval")
    name: "str"  # as in `--runtime` and `[runtimes] enabled`: the module's file name
    title: "str"  # as people know it: "Claude Code" (the template's choices, help texts)
    runtime: "Callable[[Mapping[str, str] | None], Runtime]"  # the class bound to an environment
    default_mode: "DefaultMode"
    # How a reminder hook prints its text so the CLI adds it to the model's context (plain text or a
    # JSON object of strings); None: the CLI runs no hooks of ours.
    reminder_shape: "Callable[[str, str], str | dict] | None"
    reflection: "Reflection | None"  # None: no end-of-session reflection there ...
    no_reflection: "str"  # ... and why: "not available: ..." ("" when it has one)
    approval: "Approval | None"  # None: no pre-tool-use hook approves a command there

    def __init__(self, *, name: "str", title: "str", runtime: "Callable[[Mapping[str, str] | None], Runtime]",
                 default_mode: "DefaultMode", reminder_shape: "Callable[[str, str], str | dict] | None",
                 reflection: "Reflection | None", no_reflection: "str" = "",
                 approval: "Approval | None" = None) -> None:
        if (reflection is None) != bool(no_reflection):
            raise ValueError(f"runtime {name}: give either a reflection or why there is none (no_reflection)")
        if reflection is not None and reminder_shape is None:
            raise ValueError(f"runtime {name}: a reflection needs hooks (a reminder_shape)")
        self._fill(name=name, title=title, runtime=runtime, default_mode=default_mode,
                   reminder_shape=reminder_shape, reflection=reflection, no_reflection=no_reflection,
                   approval=approval)

    @property
    def hooks(self) -> "bool":
        """Whether the CLI runs hooks of ours at all."""
        return self.reminder_shape is not None
