from agentmem.cli import main

raise SystemExit(main())
