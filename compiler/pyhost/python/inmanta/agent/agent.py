"""inmanta.agent.agent: inert at compile time (see inmanta._inert)."""
from inmanta._inert import inert_module

__getattr__ = inert_module(__name__)
