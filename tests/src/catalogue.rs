//! A generated model shaped like a real service catalogue (spec ecosystem §1.1, the seed
//! project): `networks` networks of `hosts` hosts each, the hosts indexed on network and host
//! id, one resource set per network holding its hosts, and one shared resource (an
//! `std::AgentConfig` with `autostart`, so exported, that every host constructs, merged into
//! one by its index). Network ids are `0..networks`, host ids `0..hosts` in each: the catalogue
//! of 1 network and 1 host is the partial model of network 0 with its first host.
#![allow(clippy::disallowed_methods, reason = "tests read files and the environment")]

/// The `main.cf` of a catalogue.
pub fn service_catalogue(networks: usize, hosts: usize) -> String {
    format!(
        r#"entity Network:
    int id
    string name
end
index Network(id)

entity Host extends std::Resource:
    int id
    string name
end
index Host(network, id)

Network.hosts [0:] -- Host.network [1]

implementation resources for Network:
    set = std::ResourceSet(name="network-{{{{id}}}}")
    for host in self.hosts:
        set.resources += host
    end
end

implementation agent for Host:
    std::AgentConfig(agentname="host_agent", autostart=true)
end

implement Network using resources
implement Host using agent

for i in std::sequence({networks}):
    net = Network(id=i, name="network-{{{{i}}}}")
    for j in std::sequence({hosts}):
        Host(network=net, id=j, name="host-{{{{i}}}}-{{{{j}}}}")
    end
end
"#
    )
}
