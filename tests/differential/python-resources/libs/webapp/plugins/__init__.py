from inmanta.export import dependency_manager
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


@dependency_manager
def services_after_their_configs(model, resources):
    """A service requires the configs it lists that are not purged, and no purged config; a
    secret requires the services of its host."""
    configs = {
        (res.id.get_agent_name(), res.path): res
        for res in resources.values()
        if res.id.get_entity_type() == "webapp::Config"
    }
    for res in resources.values():
        if res.id.get_entity_type() == "webapp::Service":
            for path in res.config_paths:
                config = configs.get((res.id.get_agent_name(), path))
                if config is not None and not config.purged:
                    res.requires.add(config)
            res.requires = {r for r in res.requires if not resources[r.id if isinstance(r, Resource) else r].purged}
        elif res.id.get_entity_type() == "webapp::Secret":
            res.requires.update(
                other.id
                for other in resources.values()
                if other.id.get_entity_type() == "webapp::Service" and other.model.host.name == res.model.host.name
            )
