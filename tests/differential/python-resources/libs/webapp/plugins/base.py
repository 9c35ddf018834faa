from inmanta.resources import PurgeableResource


class HostResource(PurgeableResource):
    fields = ("host_name",)

    @staticmethod
    def get_host_name(exporter, obj):
        return obj.host.name
