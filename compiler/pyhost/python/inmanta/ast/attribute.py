"""inmanta.ast.attribute: an entity's attributes as `Entity.get_attribute` gives them (a
relation end is a `RelationAttribute`); the rest is inert at compile time (see inmanta._inert)."""
from inmanta._inert import inert_module


class Attribute:
    def __init__(self, entity, name):
        self.entity = entity
        self.name = name

    def get_name(self):
        return self.name

    def __repr__(self):
        return "%s.%s" % (self.entity, self.name)


class RelationAttribute(Attribute):
    pass


__getattr__ = inert_module(__name__)
