import sys

if sys.argv[1:2] == ["hook"]:  # a runtime's hook: skip the full CLI's imports (see hooks_cli)
    from agentmem.hooks_cli import run_hook

    raise SystemExit(run_hook(sys.argv[2:]))

from agentmem.cli import main

raise SystemExit(main())
