"""inmanta.agent: inert at compile time (see inmanta._inert)."""
from inmanta._inert import inert_module

__getattr__ = inert_module(__name__, ("inmanta.agent.handler", "inmanta.agent.agent", "inmanta.agent._host"))
