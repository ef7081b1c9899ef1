from agentmem.launch import main

raise SystemExit(main())
