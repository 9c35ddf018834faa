"""inmanta.resources: how a module declares the shape of its resources (`@resource`, `Resource`
and its `fields` and `get_<field>` mappers), as the reference defines it. modelc reads these
classes from the source to know the shapes without Python; the host runs the mappers at export
(`_map_batch`). What only an agent uses stays inert."""

import re

from inmanta._inert import inert_module
from inmanta.execute.proxy import UnknownException
from inmanta.execute.util import Unknown


class ResourceException(Exception):
    pass


class IgnoreResourceException(Exception):
    """Raised by a mapper: the resource is not exported."""


class ResourceNotFoundExcpetion(Exception):
    pass


class resource:  # noqa: N801
    """`@resource("mod::Entity", agent="host.name", id_attribute="path")`: the class is how
    instances of the entity become resources."""

    _resources = {}

    def __init__(self, name, id_attribute, agent):
        if not isinstance(agent, str):
            raise ResourceException(f"The agent parameter has to be a string, got {agent} of type {type(agent)}")
        self._cls_name = name
        self._options = {"agent": agent, "name": id_attribute}

    def __call__(self, cls):
        resource._resources[self._cls_name] = (cls, self._options)
        return cls

    @classmethod
    def get_entity_resources(cls):
        return cls._resources.keys()

    @classmethod
    def get_class(cls, name):
        return cls._resources.get(name, (None, None))

    @classmethod
    def get_resources(cls):
        return ((name, definition) for name, (definition, _options) in cls._resources.items())

    @classmethod
    def reset(cls):
        cls._resources = {}


class ResourceMeta(type):
    """Merges the `fields` of a class and of all its bases, as the reference does."""

    @classmethod
    def _get_parent_fields(cls, bases):
        fields = []
        for base in bases:
            if "fields" in base.__dict__:
                if not isinstance(base.__dict__["fields"], (tuple, list)):
                    raise Exception("fields attribute of %s should be a tuple or list" % base)
                fields.extend(base.__dict__["fields"])
            fields.extend(cls._get_parent_fields(base.__bases__))
        return fields

    def __new__(cls, class_name, bases, dct):
        fields = cls._get_parent_fields(bases)
        if "fields" in dct:
            if not isinstance(dct["fields"], (tuple, list)):
                raise Exception("fields attribute of %s should be a tuple or list" % class_name)
            fields.extend(dct["fields"])
        # In first-seen order (the reference uses a set: its order varies from run to run).
        dct["fields"] = tuple(dict.fromkeys(fields))
        return type.__new__(cls, class_name, bases, dct)


class Resource(metaclass=ResourceMeta):
    fields = ("send_event", "receive_events")

    @staticmethod
    def get_send_event(_exporter, obj):
        try:
            return obj.send_event
        except Exception:
            return False

    @staticmethod
    def get_receive_events(_exporter, obj):
        try:
            return obj.receive_events
        except Exception:
            return True

    @classmethod
    def _mapper(cls, field_name):
        """What computes a field: the class's `get_<field>`, else its `map` entry; `None` for the
        attribute of that name."""
        if hasattr(cls, "get_" + field_name):
            return getattr(cls, "get_" + field_name)
        if hasattr(cls, "map") and field_name in cls.map:
            return cls.map[field_name]
        return None

    @classmethod
    def map_field(cls, exporter, entity_name, field_name, model_object, mapper=False):
        """A field's value, through its mapper or as the attribute; an unknown read on the way is
        the field's value. `mapper` is `_mapper(field_name)`, when the caller has it."""
        if mapper is False:
            mapper = cls._mapper(field_name)
        try:
            if mapper is None:
                return getattr(model_object, field_name)
            return mapper(exporter, model_object)
        except UnknownException as e:
            return e.unknown

    def __init__(self, _id):
        # Straight into the instance's dictionary: none of these is unknown (see __setattr__),
        # and a deploy makes two of these per resource.
        state = self.__dict__
        state["id"] = _id
        state["requires"] = set()
        state["unknowns"] = set()
        state.update(dict.fromkeys(self.__class__.fields))
        state["version"] = 0

    def __setattr__(self, name, value):
        if isinstance(value, Unknown):
            self.unknowns.add(name)
        self.__dict__[name] = value

    def __str__(self):
        return str(self.id)

    __repr__ = __str__

    # What a handler does with its resource: copy it, read it from its exported form.
    def clone(self, **kwargs):
        """A copy (its fields copied deeply), with `kwargs` set on it."""
        copy = self.__class__(self.id.copy())
        copy.requires = set(self.requires)
        copy.version = self.version
        copy.unknowns = set(self.unknowns)
        mine, theirs = self.__dict__, copy.__dict__
        for field in self.__class__.fields:
            theirs[field] = _deep_copy(mine[field])
        for name, value in kwargs.items():
            setattr(copy, name, value)
        return copy

    def set_version(self, version):
        self.version = version
        self.id.version = version

    def is_type(self, resource_type):
        return str(self.id.entity_type) == resource_type

    def serialize(self):
        dictionary = {field: getattr(self, field) for field in self.__class__.fields}
        dictionary["requires"] = [str(r) for r in self.requires]
        dictionary["id"] = str(self.id)
        return dictionary

    def populate(self, fields, force_fields=False):
        for field in self.__class__.fields:
            if field in fields or force_fields:
                value = fields.get(field)
                if isinstance(value, Unknown):
                    self.unknowns.add(field)
                self.__dict__[field] = value
        if "requires" in fields:
            self.requires = {Id.parse_id(r) if isinstance(r, str) else r for r in fields["requires"]}

    @classmethod
    def deserialize(cls, obj_map, use_generic=False):
        """The resource of its exported form (`id`, its fields, `requires`)."""
        resource_id = Id.parse_id(obj_map["id"])
        resource_class, _options = resource.get_class(resource_id.entity_type)
        if resource_class is None:
            raise TypeError("No resource class registered for entity %s" % resource_id.entity_type)
        instance = resource_class(resource_id)
        instance.populate(obj_map)
        instance.version = resource_id.version
        return instance


def _deep_copy(value):
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


class PurgeableResource(Resource):
    fields = ("purged", "purge_on_delete")


class DiscoveryResource(Resource):
    fields = ()


class ManagedResource(Resource):
    fields = ("managed",)

    @staticmethod
    def get_managed(exporter, obj):
        if not obj.managed:
            raise IgnoreResourceException()
        return obj.managed


PARSE_ID_REGEX = re.compile(
    r"^(?P<id>(?P<type>(?P<ns>[\w-]+(::[\w-]+)*)::(?P<class>[\w-]+))\[(?P<hostname>[^,]+),"
    r"(?P<attr>[^=]+)=(?P<value>[^\]]+)\])(,v=(?P<version>[0-9]+))?$"
)


class Id:
    """A resource's id: `entity_type[agent,attribute=value]`."""

    @classmethod
    def parse_id(cls, resource_id, version=None):
        match = PARSE_ID_REGEX.match(resource_id)
        if match is None:
            raise ValueError("Invalid id for resource %s" % resource_id)
        parts = match.groupdict()
        if version is None:
            version = int(parts["version"]) if parts["version"] is not None else 0
        return cls(parts["type"], parts["hostname"], parts["attr"], parts["value"], version)

    @classmethod
    def is_resource_id(cls, value):
        match = PARSE_ID_REGEX.match(value)
        return match is not None and match.group("version") is None

    def __init__(self, entity_type, agent_name, attribute, attribute_value, version=0):
        self.entity_type = entity_type
        self.agent_name = agent_name
        self.attribute = attribute
        self.attribute_value = attribute_value
        self.version = version

    def get_entity_type(self):
        return self.entity_type

    def get_agent_name(self):
        return self.agent_name

    def get_attribute(self):
        return self.attribute

    def get_attribute_value(self):
        return self.attribute_value

    def get_version(self):
        return self.version

    def copy(self, version=None):
        return Id(self.entity_type, self.agent_name, self.attribute, self.attribute_value,
                  self.version if version is None else version)

    def to_dict(self):
        return {
            "entity_type": self.entity_type,
            "agent_name": self.agent_name,
            "attribute": self.attribute,
            "attribute_value": self.attribute_value,
            "version": self.version,
        }

    @property
    def resource_version_id(self):
        return self.resource_version_str()

    def resource_str(self):
        return "%s[%s,%s=%s]" % (self.entity_type, self.agent_name, self.attribute, self.attribute_value)

    def resource_version_str(self):
        return "%s,v=%s" % (self.resource_str(), self.version)

    def __str__(self):
        return self.resource_version_str() if self.version > 0 else self.resource_str()

    __repr__ = __str__

    def __eq__(self, other):
        return str(self) == str(other) and type(self) is type(other)

    def __hash__(self):
        return hash(str(self))


__getattr__ = inert_module(__name__)
