//! The commands a chain's hops run: `ssh` with the options a `mitogen::Ssh` context gives,
//! `sudo` with those of a `mitogen::Sudo`, and the POSIX shell script that starts the helper
//! from a target's cache (copying it there first when it is missing or not what it should be).

use std::path::{Path, PathBuf};

use super::binary::Binary;
use super::context::{SshHop, SudoHop};

/// The argument after which the helper's own arguments follow.
pub const HELPER_ARG: &str = "__helper";

/// What the bootstrap script prints when it needs the helper's bytes on its stdin.
pub const NEED_BINARY: &str = "modelc-bootstrap: send";
/// What it prints right before the helper takes over the channel.
pub const STARTING: &str = "modelc-bootstrap: start";
/// Its exit status when it refuses the target (another CPU, an older C library).
pub const REFUSED: i32 = 97;

/// The options of the `ssh` invocation for the last of `hops`, without the program and the
/// host (the destination is its `hostname`); the hops before it are jump hosts, reached through
/// `ProxyCommand`. `askpass` holds, per hop, the askpass program of its password, if it has
/// one (the jump hosts' go into their command's environment, through `env`). The model's
/// `ssh_args` come first: OpenSSH keeps the first value it is given for an option, so they win
/// over everything modelc derives.
pub fn ssh_options(hops: &[SshHop], askpass: &[Option<PathBuf>]) -> Vec<String> {
    let Some((hop, jumps)) = hops.split_last() else { return Vec::new() };
    let asks = askpass.get(jumps.len()).is_some_and(Option::is_some);
    let mut args: Vec<String> = hop.ssh_args.clone();
    let mut option = |name: &str, value: &str| {
        args.push("-o".to_owned());
        args.push(format!("{name}={value}"));
    };
    if let Some(last) = jumps.last() {
        let mut proxy = Vec::new();
        if let Some(Some(program)) = askpass.get(jumps.len() - 1) {
            proxy.push("env".to_owned());
            proxy.extend(askpass_environment(program).into_iter().map(|(k, v)| format!("{k}={v}")));
        }
        proxy.push(program(last));
        proxy.extend(ssh_options(jumps, askpass));
        proxy.extend(["-W".to_owned(), "%h:%p".to_owned(), "--".to_owned(), last.hostname.clone()]);
        let command: Vec<String> = proxy.iter().map(|word| quote(word).replace('%', "%%")).collect();
        // `%%h` would be wrong: the `-W %h:%p` of the proxy is for ssh to fill in.
        let command = command.join(" ").replace("%%h:%%p", "%h:%p");
        option("ProxyCommand", &command);
    }
    match hop.check_host_keys.as_deref() {
        Some("ignore") => {
            option("StrictHostKeyChecking", "no");
            option("UserKnownHostsFile", "/dev/null");
            option("GlobalKnownHostsFile", "/dev/null");
        }
        // Unknown keys are recorded, changed ones refused (mitogen's "accept" asks a human).
        Some("accept") => option("StrictHostKeyChecking", "accept-new"),
        _ => option("StrictHostKeyChecking", "yes"),
    }
    if let Some(identities_only) = hop.identities_only {
        option("IdentitiesOnly", if identities_only { "yes" } else { "no" });
    }
    if let Some(compression) = hop.compression {
        option("Compression", if compression { "yes" } else { "no" });
    }
    // Never a prompt on a terminal: a password, if the model gives one, comes from the askpass
    // helper.
    option("BatchMode", if asks { "no" } else { "yes" });
    if !asks {
        option("PasswordAuthentication", "no");
        option("KbdInteractiveAuthentication", "no");
    }
    option("ConnectTimeout", "30");
    if let Some(port) = hop.port {
        args.push("-p".to_owned());
        args.push(port.to_string());
    }
    if let Some(user) = &hop.username {
        args.push("-l".to_owned());
        args.push(user.clone());
    }
    if let Some(identity) = &hop.identity_file {
        args.push("-i".to_owned());
        args.push(identity.clone());
    }
    // No terminal, no forwarded X11 or agent: the channel carries frames only.
    args.extend(["-T".to_owned(), "-x".to_owned(), "-a".to_owned()]);
    args
}

/// The environment that makes `ssh` ask `program` for a password, with or without a display.
pub fn askpass_environment(program: &Path) -> [(&'static str, String); 2] {
    [("SSH_ASKPASS", program.to_string_lossy().into_owned()), ("SSH_ASKPASS_REQUIRE", "force".to_owned())]
}

/// The `ssh` program of a hop.
pub fn program(hop: &SshHop) -> String {
    hop.ssh_path.clone().unwrap_or_else(|| "ssh".to_owned())
}

/// The `sudo` invocation of `hop` up to the command it runs: `-n` (never a prompt) unless the
/// model gives a password, then `-A` (from the askpass helper).
pub fn sudo_args(hop: &SudoHop) -> Vec<String> {
    let mut args = vec![hop.sudo_path.clone().unwrap_or_else(|| "sudo".to_owned())];
    args.push(if hop.has_password { "-A" } else { "-n" }.to_owned());
    args.extend(["-u".to_owned(), hop.user().to_owned()]);
    if hop.set_home {
        args.push("-H".to_owned());
    }
    if hop.preserve_env {
        args.push("-E".to_owned());
    }
    if let Some(role) = &hop.selinux_role {
        args.extend(["-r".to_owned(), role.clone()]);
    }
    if let Some(kind) = &hop.selinux_type {
        args.extend(["-t".to_owned(), kind.clone()]);
    }
    args.extend(hop.sudo_args.iter().cloned());
    args.push("--".to_owned());
    args
}

/// `word` quoted for a POSIX shell (and for fish and zsh, which read single quotes alike).
pub fn quote(word: &str) -> String {
    if !word.is_empty() && word.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./=:@%+,".contains(&b)) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// The command line the target's login shell runs: the bootstrap script with its arguments,
/// then the helper's own arguments.
pub fn remote_command(binary: &Binary, cache_dir: &str, helper_args: &[String]) -> String {
    let mut words = vec![
        "sh".to_owned(),
        "-c".to_owned(),
        BOOTSTRAP.to_owned(),
        "modelc-bootstrap".to_owned(),
        binary.sha256.clone(),
        binary.bytes.len().to_string(),
        binary.arch.clone(),
        binary.glibc.clone().unwrap_or_default(),
        cache_dir.to_owned(),
    ];
    words.extend(helper_args.iter().cloned());
    words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// Starts the helper on the target from the cache directory `$5` (a leading `~/` is the user's
/// home), after checking the machine (`$3`, the C library `$4`): the cached copy named by its
/// SHA-256 (`$1`) is opened, its hash is checked on the open descriptor, and that descriptor is
/// run, so a file replaced in between is never what runs. A missing or wrong copy is replaced:
/// `$2` bytes are read from stdin into a private temporary file, checked, and renamed into place.
const BOOTSTRAP: &str = r#"set -eu
hash=$1 size=$2 arch=$3 glibc=$4 dir=$5
shift 5
refuse() { echo "modelc: refused: $*" >&2; exit 97; }
machine=$(uname -m)
[ "$machine" = "$arch" ] || refuse "this host is $machine, and this modelc runs on $arch only"
if [ -n "$glibc" ]; then
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null || true)
  case "$have" in
    "glibc "*) have=${have#glibc } ;;
    *) refuse "this host has no GNU C library; this modelc needs glibc $glibc or newer" ;;
  esac
  hmaj=${have%%.*} hmin=${have#*.} nmaj=${glibc%%.*} nmin=${glibc#*.}
  hmin=${hmin%%.*}
  if [ "$hmaj" -lt "$nmaj" ] || { [ "$hmaj" -eq "$nmaj" ] && [ "$hmin" -lt "$nmin" ]; }; then
    refuse "this host has glibc $have; this modelc needs glibc $glibc or newer"
  fi
fi
case "$dir" in "~/"*) dir=$HOME/${dir#"~/"} ;; esac
mask=$(umask)
umask 077
mkdir -p "$dir"
[ -O "$dir" ] || refuse "the helper directory $dir is not owned by $(id -un)"
chmod 700 "$dir"
file=$dir/$hash
# OpenSSL's SHA-256 is several times faster than coreutils' where it is installed.
if command -v openssl >/dev/null 2>&1; then
  sum() { openssl dgst -sha256 -r | cut -c1-64; }
else
  sum() { sha256sum | cut -c1-64; }
fi
ok=no
if [ -f "$file" ] && [ -r "$file" ]; then
  exec 3<"$file"
  [ "$(sum <&3)" = "$hash" ] && ok=yes
fi
if [ $ok = no ]; then
  echo "modelc-bootstrap: send"
  tmp=$dir/.$hash.$$
  head -c "$size" >"$tmp"
  if [ "$(sum <"$tmp")" != "$hash" ]; then rm -f "$tmp"; echo "modelc: the helper copied to $dir arrived damaged" >&2; exit 1; fi
  chmod 700 "$tmp"
  mv -f "$tmp" "$file"
  exec 3<"$file"
  [ "$(sum <&3)" = "$hash" ] || { echo "modelc: the helper in $dir changed as it was started" >&2; exit 1; }
fi
echo "modelc-bootstrap: start"
umask "$mask"
exec /proc/self/fd/3 "$@"
"#;

#[cfg(test)]
mod tests {
    use super::*;

    fn hop(hostname: &str) -> SshHop {
        SshHop {
            hostname: hostname.into(),
            port: None,
            username: None,
            ssh_path: None,
            ssh_args: Vec::new(),
            check_host_keys: None,
            identity_file: None,
            identities_only: None,
            compression: None,
            has_password: false,
        }
    }

    fn value_of<'a>(args: &'a [String], name: &str) -> Vec<&'a str> {
        args.iter().filter_map(|a| a.strip_prefix(&format!("{name}="))).collect()
    }

    #[test]
    fn unset_host_key_checking_enforces() {
        let args = ssh_options(&[hop("web")], &[]);
        assert_eq!(value_of(&args, "StrictHostKeyChecking"), ["yes"]);
        assert_eq!(value_of(&args, "BatchMode"), ["yes"]);
        let mut ignore = hop("web");
        ignore.check_host_keys = Some("ignore".into());
        let args = ssh_options(&[ignore], &[]);
        assert_eq!(value_of(&args, "StrictHostKeyChecking"), ["no"]);
        assert_eq!(value_of(&args, "UserKnownHostsFile"), ["/dev/null"]);
    }

    #[test]
    fn the_models_ssh_args_come_first_so_they_win() {
        let mut web = hop("web");
        web.ssh_args = vec!["-o".into(), "StrictHostKeyChecking=no".into()];
        web.port = Some(2222);
        web.username = Some("deploy".into());
        let args = ssh_options(&[web], &[]);
        assert_eq!(&args[..2], ["-o", "StrictHostKeyChecking=no"]);
        let port = args.iter().position(|a| a == "-p").unwrap();
        assert_eq!(args[port + 1], "2222");
        assert!(args.windows(2).any(|w| w == ["-l", "deploy"]));
    }

    #[test]
    fn a_jump_host_is_a_proxy_command_with_its_own_options() {
        let mut jump = hop("jump");
        jump.port = Some(22022);
        jump.identity_file = Some("/keys/my key".into());
        let args = ssh_options(&[jump, hop("web")], &[Some(PathBuf::from("/run/ask pass")), None]);
        let proxy = value_of(&args, "ProxyCommand");
        assert_eq!(proxy.len(), 1);
        let words = shlex::split(proxy[0]).unwrap();
        assert_eq!(words[..4], ["env", "SSH_ASKPASS=/run/ask pass", "SSH_ASKPASS_REQUIRE=force", "ssh"]);
        assert_eq!(value_of(&args, "BatchMode"), ["yes"], "the host itself has no password");
        assert!(words.windows(2).any(|w| w == ["-i", "/keys/my key"]), "{words:?}");
        assert!(words.windows(2).any(|w| w == ["-W", "%h:%p"]), "{words:?}");
        assert_eq!(words.last().unwrap(), "jump");
    }

    #[test]
    fn sudo_never_prompts_without_a_password() {
        let hop = SudoHop {
            username: Some("nobody".into()),
            sudo_path: None,
            set_home: true,
            preserve_env: false,
            sudo_args: vec!["--login-class=x".into()],
            selinux_role: None,
            selinux_type: None,
            has_password: false,
        };
        assert_eq!(sudo_args(&hop), ["sudo", "-n", "-u", "nobody", "-H", "--login-class=x", "--"]);
        assert_eq!(sudo_args(&SudoHop { has_password: true, ..hop })[1], "-A");
    }

    #[test]
    fn quoting_survives_a_shell() {
        for word in ["plain", "two words", "it's", "$HOME", "", "a\nb", "*"] {
            let out = std::process::Command::new("sh").args(["-c", &format!("printf %s {}", quote(word))]).output();
            assert_eq!(String::from_utf8(out.unwrap().stdout).unwrap(), word);
        }
    }
}
