"""agentmem: portable memory and skills for coding agents."""

__version__ = "0.1.0"
