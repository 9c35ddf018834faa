"""inmanta.execute.proxy: the model's instances as plugins see them.

An attribute read asks modelc for the value. A value that is not complete yet suspends the
whole plugin call (`_Suspend` is not an `Exception`, so a plugin's `except Exception` does not
catch it); modelc makes the call again once the value is there, as the reference does.
"""

from inmanta.execute.util import Unknown


class UnknownException(Exception):
    """An unknown value was read through a proxy: whatever was being computed is unknown too
    (a plugin's result, a resource's field)."""

    def __init__(self, unknown):
        super().__init__()
        self.unknown = unknown


class DynamicProxy:
    """The base of every proxy, for `isinstance` checks."""

    __slots__ = ()

    @classmethod
    def return_value(cls, value):
        return value

    @classmethod
    def unwrap(cls, value):
        return value


class SequenceProxy(DynamicProxy, list):
    __slots__ = ()


class DictProxy(DynamicProxy, dict):
    __slots__ = ()


class ProxyContext:
    def __init__(self, *args, **kwargs):
        pass


class Named:
    """A name of the model as the reference's objects give it: an entity's type (`_type()`), a
    namespace (`Context.owner.namespace`)."""

    def __init__(self, name):
        self._name = name

    def get_full_name(self):
        return self._name

    @property
    def name(self):
        return self._name.rsplit("::", 1)[-1]

    @property
    def namespace(self):
        return self._name.rsplit("::", 1)[0]

    def __str__(self):
        return self._name

    def __repr__(self):
        return self._name


class EntityType(Named):
    """An instance's entity (`_type()`): its name, its parents and its attributes, which modelc
    gives."""

    def __init__(self, name, runtime):
        super().__init__(name)
        self._runtime = runtime

    def _info(self):
        return self._runtime.entity_type(self._name)

    def get_all_parent_names(self):
        return list(self._info()["parents"])

    def get_all_attribute_names(self):
        return [name for name, _ in self._info()["attributes"]]

    def get_attribute(self, name):
        from inmanta.ast.attribute import Attribute, RelationAttribute

        for attribute, relation in self._info()["attributes"]:
            if attribute == name:
                return (RelationAttribute if relation else Attribute)(self, name)
        return None

    def __eq__(self, other):
        return isinstance(other, Named) and other._name == self._name

    def __hash__(self):
        return hash(self._name)


class InstanceProxy(DynamicProxy):
    """An instance of the model: its attributes and relations, read-only."""

    __slots__ = ("_modelc_id", "_modelc_type", "_modelc_runtime")

    def __init__(self, runtime, instance, entity):
        object.__setattr__(self, "_modelc_runtime", runtime)
        object.__setattr__(self, "_modelc_id", instance)
        object.__setattr__(self, "_modelc_type", entity)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = self._modelc_runtime.attribute(self._modelc_id, name)
        if isinstance(value, Unknown):
            raise UnknownException(value)
        return value

    def __setattr__(self, name, value):
        raise Exception("an instance of the model can not be changed by a plugin (" + name + ")")

    def _type(self):
        return EntityType(self._modelc_type, self._modelc_runtime)

    def _get_instance(self):
        return self

    def __eq__(self, other):
        return isinstance(other, InstanceProxy) and other._modelc_id == self._modelc_id

    def __hash__(self):
        return hash(("instance", self._modelc_id))

    def __repr__(self):
        return "%s %d" % (self._modelc_type, self._modelc_id)

    __str__ = __repr__


class FinalInstanceProxy(InstanceProxy):
    """An instance while resources are mapped, when the model is final: what is read of it is
    kept in the proxy's own `__dict__`, where Python's attribute lookup finds it again without a
    call (mappers read the same attributes of 10,000 instances). Only names the class does not
    define get there, so `_type()` and the others stay methods."""

    # No `__slots__`: the instance's `__dict__` is the cache.

    def __getattr__(self, name):
        value = InstanceProxy.__getattr__(self, name)
        self.__dict__[name] = value
        return value


_new = object.__new__
_set_runtime = InstanceProxy._modelc_runtime.__set__
_set_id = InstanceProxy._modelc_id.__set__
_set_type = InstanceProxy._modelc_type.__set__


def new_proxy(runtime, instance, entity):
    """`InstanceProxy(runtime, instance, entity)`, made faster: a mapper run makes one per
    instance and relation it reads."""
    proxy = _new(InstanceProxy)
    _set_runtime(proxy, runtime)
    _set_id(proxy, instance)
    _set_type(proxy, entity)
    return proxy


_set_dict = object.__setattr__


def new_final_proxy(runtime, instance, entity, values):
    """A `FinalInstanceProxy` whose `values` (attribute → decoded value, none unknown and no
    name the class defines) are read without a call."""
    proxy = _new(FinalInstanceProxy)
    _set_runtime(proxy, runtime)
    _set_id(proxy, instance)
    _set_type(proxy, entity)
    _set_dict(proxy, "__dict__", values)
    return proxy

