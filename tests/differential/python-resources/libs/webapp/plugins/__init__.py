from inmanta.plugins import plugin
from inmanta.resources import IgnoreResourceException, ManagedResource, Resource, resource

from .base import HostResource


@plugin
def shout(value: "string") -> "string":
    return value.upper() + "!"


@resource("webapp::Config", agent="host.name", id_attribute="path")
class Config(HostResource):
    fields = ("path", "hash", "mode")

    @staticmethod
    def get_hash(exporter, obj):
        return exporter.upload_file(obj.content)

    @staticmethod
    def get_mode(exporter, obj):
        return "%04o" % int(str(obj.mode), 8)


@resource("webapp::Service", agent="host.name", id_attribute="name")
class Service(ManagedResource):
    fields = ("name", "ports", "config_paths", "banner")
    map = {"config_paths": lambda exporter, obj: sorted(c.path for c in obj.configs)}

    @staticmethod
    def get_banner(exporter, obj):
        return shout(obj.name)


@resource("webapp::Secret", agent="host.name", id_attribute="key")
class Secret(Resource):
    fields = ("key",)

    @staticmethod
    def get_key(exporter, obj):
        if obj.ignore:
            raise IgnoreResourceException()
        return obj.name.upper()
