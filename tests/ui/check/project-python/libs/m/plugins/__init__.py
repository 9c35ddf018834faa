"""Plugins whose signatures modelc reads without running them."""
from inmanta.plugins import Context, plugin


@plugin
def slug(name: "string", sep: "string" = "-") -> "string":
    return name.lower().replace(" ", sep)


@plugin("count_items")
def count(items: "m::Item[]", ctx: Context) -> "int":
    return len(items)


@plugin
def tags(*names: "string", upper: "bool" = False) -> "string[]":
    return [n.upper() if upper else n for n in names]
