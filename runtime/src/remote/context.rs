//! Where a resource is applied: its context (`via`, the mitogen context the `fs` and `exec`
//! modules export) read as the hops that lead from this machine to the one it manages.
//!
//! The IR carries the innermost context with the one it goes through nested in its `via`:
//! `Sudo` via `Ssh` via `Ssh` is `{"method_name": "sudo", …, "via": {"method_name": "ssh", …,
//! "via": {…}}}`. Read outwards in, that is a jump host, the target host, then sudo on it.
//! `Local` contributes nothing. The `Ssh` hops come first (all but the last are jump hosts,
//! reached with OpenSSH's own `ProxyCommand … -W`), then the `Sudo` hops, each started by the
//! helper of the hop before it; an `Ssh` hop after a `Sudo` one (ssh run as another user on the
//! remote host) is refused.

use std::fmt;

use modelc_ir::Resource;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a resource is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// On this machine, as this user: no context, or only `mitogen::Local`.
    Local,
    /// Through the hops of this chain.
    Remote(Chain),
}

impl Target {
    /// The target of `resource`; an error says why its context cannot be followed (the
    /// resource is then undeployable, with that reason).
    pub fn of(resource: &Resource) -> Result<Target, String> {
        match resource.attributes.get("via") {
            None | Some(Value::Null) => Ok(Target::Local),
            Some(via) => Chain::from_context(via).map(|chain| match chain {
                Some(chain) => Target::Remote(chain),
                None => Target::Local,
            }),
        }
    }

    /// A key that is equal for resources reached the same way ("" for this machine): what
    /// connections, dry-run predictions and groups are kept apart by.
    pub fn key(&self) -> String {
        match self {
            Target::Local => String::new(),
            Target::Remote(chain) => chain.key(),
        }
    }
}

/// The hops from this machine to a remote one: `ssh` first (jump hosts, then the host), then
/// `sudo`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Chain {
    /// Jump hosts then the host itself, outermost first; may be empty (sudo on this machine).
    pub ssh: Vec<SshHop>,
    /// Users to switch to, in order, on the last host.
    pub sudo: Vec<SudoHop>,
}

/// A `mitogen::Ssh` context: one OpenSSH connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SshHop {
    pub hostname: String,
    pub port: Option<u16>,
    pub username: Option<String>,
    /// The `ssh` program to run (`ssh` on `PATH` when unset).
    pub ssh_path: Option<String>,
    /// Extra arguments, given before every option modelc derives (for OpenSSH the first value
    /// given for an option wins, so these win).
    pub ssh_args: Vec<String>,
    /// `enforce`, `accept` or `ignore`; unset is `enforce`.
    pub check_host_keys: Option<String>,
    pub identity_file: Option<String>,
    pub identities_only: Option<bool>,
    pub compression: Option<bool>,
    /// Whether the model gives a password (the password itself never leaves the resource).
    pub has_password: bool,
}

/// A `mitogen::Sudo` context: one `sudo` to another user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SudoHop {
    /// The user to become; `root` when unset.
    pub username: Option<String>,
    pub sudo_path: Option<String>,
    pub set_home: bool,
    pub preserve_env: bool,
    pub sudo_args: Vec<String>,
    pub selinux_role: Option<String>,
    pub selinux_type: Option<String>,
    pub has_password: bool,
}

impl Chain {
    /// The chain of the context `via`; `None` when it leads nowhere but this machine.
    pub fn from_context(via: &Value) -> Result<Option<Chain>, String> {
        let mut levels = Vec::new();
        let mut level = Some(via);
        while let Some(context) = level {
            if levels.len() >= MAX_HOPS {
                return Err(format!("its context (`via`) is a chain of more than {MAX_HOPS} contexts"));
            }
            let Value::Object(map) = context else {
                return Err(format!("its context (`via`) is {context}, not a mitogen context"));
            };
            levels.push(map);
            level = map.get("via").filter(|v| !v.is_null());
        }
        let mut chain = Chain { ssh: Vec::new(), sudo: Vec::new() };
        // Outermost first.
        for map in levels.into_iter().rev() {
            match map.get("method_name").and_then(Value::as_str) {
                Some("local") => {}
                Some("ssh") if chain.sudo.is_empty() => chain.ssh.push(SshHop::from_context(map)?),
                Some("ssh") => {
                    return Err("its context is an ssh context reached through sudo (ssh run as another user on the \
                                remote host), which modelc does not follow: reach the host with ssh first, or \
                                use a jump host (an ssh context via an ssh context)"
                        .to_owned());
                }
                Some("sudo") => chain.sudo.push(SudoHop::from_context(map)?),
                Some(other) => {
                    return Err(format!(
                        "its context (`via`) is `{other}`; modelc reaches hosts through local, ssh and sudo contexts"
                    ));
                }
                None => return Err("its context (`via`) has no `method_name`: it is not a mitogen context".to_owned()),
            }
        }
        Ok(if chain.ssh.is_empty() && chain.sudo.is_empty() { None } else { Some(chain) })
    }

    /// Equal for equal chains: the canonical JSON of the hops.
    pub fn key(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The host the chain ends on, as users name it.
    pub fn host(&self) -> &str {
        self.ssh.last().map_or("localhost", |hop| hop.hostname.as_str())
    }
}

/// More hops than any real model has: a bound for hand-written IR.
const MAX_HOPS: usize = 16;

type Map = serde_json::Map<String, Value>;

fn text(map: &Map, name: &str) -> Result<Option<String>, String> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.is_empty() => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("its context's `{name}` is {other}, not a string")),
    }
}

fn flag(map: &Map, name: &str) -> Result<Option<bool>, String> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("its context's `{name}` is {other}, not a boolean")),
    }
}

fn words(map: &Map, name: &str) -> Result<Vec<String>, String> {
    match map.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!("its context's `{name}` holds {other}, not a string")),
            })
            .collect(),
        Some(other) => Err(format!("its context's `{name}` is {other}, not a list of strings")),
    }
}

impl SshHop {
    fn from_context(map: &Map) -> Result<SshHop, String> {
        let hostname = text(map, "hostname")?.ok_or("its ssh context has no `hostname`")?;
        let port = match map.get("port") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => Some(
                n.as_u64()
                    .and_then(|p| u16::try_from(p).ok())
                    .filter(|&p| p > 0)
                    .ok_or_else(|| format!("its ssh context's `port` {n} is not a port number"))?,
            ),
            Some(Value::String(s)) => {
                Some(s.parse().map_err(|_| format!("its ssh context's `port` `{s}` is not a port number"))?)
            }
            Some(other) => return Err(format!("its ssh context's `port` is {other}, not a port number")),
        };
        let check_host_keys = text(map, "check_host_keys")?;
        if let Some(mode) = &check_host_keys
            && !["enforce", "accept", "ignore"].contains(&mode.as_str())
        {
            return Err(format!(
                "its ssh context's `check_host_keys` is `{mode}`; it is one of enforce, accept and ignore"
            ));
        }
        if hostname.starts_with('-') {
            return Err(format!("its ssh context's `hostname` `{hostname}` starts with `-`"));
        }
        Ok(SshHop {
            hostname,
            port,
            username: text(map, "username")?,
            ssh_path: text(map, "ssh_path")?,
            ssh_args: words(map, "ssh_args")?,
            check_host_keys,
            identity_file: text(map, "identity_file")?,
            identities_only: flag(map, "identities_only")?,
            compression: flag(map, "compression")?,
            has_password: text(map, "password")?.is_some(),
        })
    }

    /// `user@host:port`, as messages name the hop.
    pub fn address(&self) -> String {
        let user = self.username.as_deref().map(|u| format!("{u}@")).unwrap_or_default();
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        format!("{user}{}{port}", self.hostname)
    }
}

impl SudoHop {
    fn from_context(map: &Map) -> Result<SudoHop, String> {
        Ok(SudoHop {
            username: text(map, "username")?,
            sudo_path: text(map, "sudo_path")?,
            set_home: flag(map, "set_home")?.unwrap_or(false),
            preserve_env: flag(map, "preserve_env")?.unwrap_or(false),
            sudo_args: words(map, "sudo_args")?,
            selinux_role: text(map, "selinux_role")?,
            selinux_type: text(map, "selinux_type")?,
            has_password: text(map, "password")?.is_some(),
        })
    }

    pub fn user(&self) -> &str {
        self.username.as_deref().unwrap_or("root")
    }
}

impl fmt::Display for Chain {
    /// `ssh jump → ssh root@web:2222 → sudo nobody`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hops: Vec<String> = self
            .ssh
            .iter()
            .map(|hop| format!("ssh {}", hop.address()))
            .chain(self.sudo.iter().map(|hop| format!("sudo {}", hop.user())))
            .collect();
        f.write_str(&hops.join(" → "))
    }
}

/// The password a resource's context gives for its `index`-th hop of `kind` (`ssh` or `sudo`),
/// counted outermost first as in [`Chain`]: read only when ssh or sudo asks for it.
pub fn password(via: &Value, kind: &str, index: usize) -> Option<String> {
    let mut levels = Vec::new();
    let mut level = Some(via);
    while let Some(Value::Object(map)) = level {
        levels.push(map);
        level = map.get("via").filter(|v| !v.is_null());
    }
    levels
        .into_iter()
        .rev()
        .filter(|map| map.get("method_name").and_then(Value::as_str) == Some(kind))
        .nth(index)
        .and_then(|map| map.get("password")?.as_str().map(str::to_owned))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_contexts_and_none_are_this_machine() {
        assert_eq!(Chain::from_context(&json!({"method_name": "local"})).unwrap(), None);
        let nested = json!({"method_name": "local", "via": {"method_name": "local"}});
        assert_eq!(Chain::from_context(&nested).unwrap(), None);
    }

    #[test]
    fn a_chain_reads_outermost_first() {
        let via = json!({"method_name": "sudo", "username": "nobody", "via": {
            "method_name": "ssh", "hostname": "web", "port": 2222, "username": null,
            "via": {"method_name": "ssh", "hostname": "jump", "check_host_keys": "accept"}}});
        let chain = Chain::from_context(&via).unwrap().unwrap();
        assert_eq!(chain.ssh.len(), 2);
        assert_eq!(chain.ssh[0].hostname, "jump");
        assert_eq!(chain.ssh[1].port, Some(2222));
        assert_eq!(chain.sudo[0].user(), "nobody");
        assert_eq!(chain.to_string(), "ssh jump → ssh web:2222 → sudo nobody");
        assert_eq!(chain.host(), "web");
    }

    #[test]
    fn what_cannot_be_followed_says_why() {
        let ssh_after_sudo = json!({"method_name": "ssh", "hostname": "b", "via": {"method_name": "sudo", "via": {"method_name": "ssh", "hostname": "a"}}});
        assert!(Chain::from_context(&ssh_after_sudo).unwrap_err().contains("through sudo"));
        assert!(Chain::from_context(&json!({"method_name": "docker"})).unwrap_err().contains("`docker`"));
        assert!(Chain::from_context(&json!({"method_name": "ssh"})).unwrap_err().contains("hostname"));
        let bad_mode = json!({"method_name": "ssh", "hostname": "a", "check_host_keys": "maybe"});
        assert!(Chain::from_context(&bad_mode).unwrap_err().contains("enforce, accept and ignore"));
        let option = json!({"method_name": "ssh", "hostname": "-oProxyCommand=x"});
        assert!(Chain::from_context(&option).is_err());
    }

    #[test]
    fn passwords_are_read_only_on_demand() {
        let via = json!({"method_name": "sudo", "password": "s3", "via": {"method_name": "ssh", "hostname": "h", "password": "p1"}});
        let chain = Chain::from_context(&via).unwrap().unwrap();
        assert!(chain.ssh[0].has_password && chain.sudo[0].has_password);
        assert!(!chain.key().contains("p1"), "the key never holds a password");
        assert_eq!(password(&via, "ssh", 0).as_deref(), Some("p1"));
        assert_eq!(password(&via, "sudo", 0).as_deref(), Some("s3"));
        assert_eq!(password(&via, "sudo", 1), None);
    }
}
