"""inmanta.execute: the values and proxies plugins see."""
from inmanta._inert import inert_module

__getattr__ = inert_module(__name__, ("inmanta.execute.util", "inmanta.execute.proxy"))
