"""inmanta_plugins.mitogen.abc inside modelc's handler host: handlers that reach their resource's
host through a `Proxy` (see inmanta_plugins.mitogen), one per context for the run."""
import typing

import inmanta.agent.handler
import inmanta.resources
import inmanta_plugins.mitogen


class Resource(inmanta.resources.Resource):
    """A resource deployed through a mitogen context (its `via`)."""

    fields = ("via",)

    @classmethod
    def get_via(cls, _exporter, entity):
        return inmanta_plugins.mitogen.get_resource_context(entity)


R = typing.TypeVar("R", bound=Resource)


class Handler(inmanta.agent.handler.HandlerAPI[R]):
    """Sets `self.proxy` to the run's proxy of the resource's context before each operation, its
    calls logged to the operation's context, and gives the proxy its logger back after."""

    @inmanta.agent.handler.cache(ignore=["serialized_context"], call_on_delete=lambda p: p.disconnect(best_effort=True))
    def get_proxy(self, serialized_context, hash, agent_name):  # noqa: A002 (the module's signature)
        proxy = inmanta_plugins.mitogen.Proxy(serialized_context)
        proxy.connect()
        return proxy

    def pre(self, ctx, resource):
        super().pre(ctx, resource)
        self.proxy = self.get_proxy(
            resource.via,
            hash=inmanta_plugins.mitogen.context_hash(resource.via),
            agent_name=resource.id.get_agent_name(),
        )
        self.proxy_previous_logger = self.proxy.logger
        self.proxy.logger = ctx

    def post(self, ctx, resource):
        if hasattr(self, "proxy") and hasattr(self, "proxy_previous_logger"):
            self.proxy.logger = self.proxy_previous_logger
        super().post(ctx, resource)


class ResourceABC(Resource, inmanta.resources.PurgeableResource):
    """A purgeable resource deployed through a mitogen context."""


PR = typing.TypeVar("PR", bound=ResourceABC)


class HandlerABC(Handler[PR], inmanta.agent.handler.CRUDHandler[PR]):
    """A CRUD handler deployed through a mitogen context."""
