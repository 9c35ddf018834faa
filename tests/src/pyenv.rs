//! The shared Python environments of the tests (`modelc_test_pyenv` makes them).

pub use modelc_test_pyenv::{registry_env, site_packages};

/// The registry's `exec` 2.1.1, `ip` 2.0.3 and `fs` 1.1.2, and what their models and Python
/// import: the environment `exec-ip-fs` that several tests share.
pub const EXEC_IP_FS: [&str; 8] = [
    "inmanta-module-exec==2.1.1",
    "inmanta-module-mitogen==0.2.5",
    "mitogen==0.3.54",
    "inmanta-module-ip==2.0.3",
    "inmanta-module-net==1.1.3",
    "netaddr==1.3.0",
    "inmanta-module-fs==1.1.2",
    "PyYAML==6.0.3",
];
