//! The public Inmanta modules that are published on the Python package registry (PyPI), each as
//! `inmanta-module-<name>`: an import of one that is not installed says how to install it.
//! The list is data, not a network call: a compiler never asks the network.

/// The modules, by import name (std is built into modelc and never missing).
const PUBLISHED: &[&str] = &[
    "ansible",
    "apache",
    "apt",
    "aws",
    "config",
    "cron",
    "docker",
    "drupal",
    "exec",
    "files",
    "fs",
    "git_ops",
    "graph",
    "ip",
    "kubernetes",
    "mitogen",
    "mysql",
    "net",
    "netbird",
    "openstack",
    "php",
    "platform",
    "podman",
    "postgresql",
    "redhat",
    "rest",
    "sops",
    "ssh",
    "terraform",
    "ubuntu",
    "user",
    "vyos",
    "web",
    "yaml",
    "yum",
];

/// The registry package of public module `module` (a top-level name): `inmanta-module-git-ops`
/// for `git_ops`, as the modules' own packaging names them.
pub(crate) fn package(module: &str) -> Option<String> {
    PUBLISHED.contains(&module).then(|| format!("inmanta-module-{}", module.replace('_', "-")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_public_module_is_named_as_its_package_is() {
        assert_eq!(package("fs").as_deref(), Some("inmanta-module-fs"));
        assert_eq!(package("git_ops").as_deref(), Some("inmanta-module-git-ops"));
        assert_eq!(package("mymodule"), None);
        assert_eq!(package("std"), None);
    }

    #[test]
    fn the_list_is_sorted_and_has_no_duplicates() {
        assert!(PUBLISHED.windows(2).all(|w| w[0] < w[1]));
    }
}
