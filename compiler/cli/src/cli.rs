//! The command-line interface definition (clap derive).

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// modelc: a compiler, toolchain and runtime for the .cf infrastructure modelling language.
/// Check and compile models, export them to a store as versions of desired state (`export`,
/// `plan`, `diff`), and apply them to this machine (`deploy`).
#[derive(Debug, Parser)]
#[command(name = "modelc", version, about, propagate_version = true)]
pub struct Cli {
    /// When to colour diagnostics. `auto` colours a terminal unless NO_COLOR is set.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// The output format: `human` (the default; diagnostics on stderr) or `json` (on stdout).
    /// `compile` also takes `reference` (with `-o`: the reference exporter's `export -j` list);
    /// `graph` takes `dot` (its default) or `mermaid`.
    // One global flag for every command, so its values are listed here in words: clap's list
    // would offer every command the formats only `compile` and `graph` take.
    #[arg(long, global = true, value_enum, default_value_t = Format::Human, hide_possible_values = true)]
    pub format: Format,

    /// Print only diagnostics: no summaries or confirmations on stderr.
    #[arg(long, short, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Also print how long each phase took, with the executor's counts (as `MODELC_EXEC_STATS=1`
    /// does), and the store's part of an export.
    #[arg(long, short, global = true)]
    pub verbose: bool,

    /// The Python environment that runs modules' plugins written in Python: an interpreter, or
    /// an environment's directory. Default: `python` in project.yml, else the active virtual
    /// environment, else `python3` on PATH. Its installed modules (`inmanta_plugins.<module>`
    /// packages) are found before the module path's.
    #[arg(long, global = true, value_name = "PATH")]
    pub python: Option<PathBuf>,

    /// How long one Python plugin call may take, in seconds, before the interpreter is stopped
    /// and the compile fails.
    #[arg(long, global = true, value_name = "SECS", default_value = "60", value_parser = seconds)]
    pub plugin_timeout: f64,

    /// Shape fs and exec resources with those modules' own Python resource classes, as every
    /// other module's are, rather than with the faster shapes modelc ships for them: to check
    /// that both agree.
    #[arg(long, global = true)]
    pub python_shapes: bool,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check the syntax of .cf files (no name resolution or types).
    Parse {
        /// The files to parse.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Print each file's syntax tree to stdout.
        #[arg(long)]
        dump_ast: bool,
    },
    /// Check a model: a .cf file, or a project directory (with project.yml). Without PATH,
    /// the nearest project.yml above the current directory is used.
    Check {
        /// The model: a .cf file, or a project directory (with project.yml). Default: the nearest
        /// project.yml above the current directory.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
    },
    /// Compile a model: check it, execute it, refine it into resources grouped in resource
    /// sets, and validate them. Prints what `std::print` printed (stdout) and a summary of the
    /// instances and resources (stderr).
    Compile {
        /// The model: a .cf file, or a project directory (with project.yml). Default: the nearest
        /// project.yml above the current directory.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Print every instance with its attribute values to stdout.
        #[arg(long)]
        dump_instances: bool,
        /// Write the resources to FILE: the resource IR (JSON), or with `--format reference`
        /// the reference exporter's list. Nothing is written when the model has errors.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// The model is a partial compile (only the services being changed): also check that
        /// every resource set's members belong to the set's service.
        #[arg(long)]
        partial: bool,
        /// Where `std::getfact` reads the facts handlers learnt.
        #[command(flatten)]
        store: StoreArg,
    },
    /// Compile a model and draw its resource graph on stdout: resources, their requires edges
    /// (`a -> b`: a requires b), notifications (bold, with their timing) and resource sets as
    /// clusters. `--format dot` (default) or `--format mermaid`.
    Graph {
        /// The model: a .cf file, or a project directory (with project.yml). Default: the nearest
        /// project.yml above the current directory.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Also draw the edges `modelc deploy` adds because the resources imply them (a file
        /// after its directory, …), dashed and labelled `auto`.
        #[arg(long)]
        autoedges: bool,
        /// Where `std::getfact` reads the facts handlers learnt.
        #[command(flatten)]
        store: StoreArg,
    },
    /// Compile a model and store its resources as a new version of desired state (in
    /// `.modelc/store.sqlite` beside the project, or `--store PATH`). With `--partial`, the model
    /// holds only the resource sets being changed: the new version is the latest one with those
    /// sets replaced, the other sets and the shared resources kept.
    Export {
        /// The model: a .cf file, or a project directory (with project.yml). Default: the nearest
        /// project.yml above the current directory.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Export a resource IR written by `modelc compile -o` instead of compiling a model.
        #[arg(long, value_name = "FILE", conflicts_with = "path")]
        ir: Option<PathBuf>,
        #[command(flatten)]
        partial: PartialArgs,
        /// Why this version was made, recorded with it.
        #[arg(short, long, default_value = "")]
        message: String,
        /// Store a new version even when it would hold exactly the resources of the latest one
        /// (without it, such an export, full or partial, says so and stores nothing).
        #[arg(long)]
        force: bool,
        /// Release the version once stored (a server's agents deploy only released versions).
        #[arg(long)]
        release: bool,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Show what `modelc export` would change against the latest stored version, without
    /// writing anything: resources added, removed and changed (attribute by attribute, moves
    /// between sets included), or the store's rule the export would break. Exit status 0 when the
    /// export would be accepted, 1 when it would be refused; with `--detailed-exitcode`, 3 when it
    /// would be accepted and changes something.
    Plan {
        /// The model: a .cf file, or a project directory (with project.yml). Default: the nearest
        /// project.yml above the current directory.
        #[arg(value_name = "PATH")]
        path: Option<PathBuf>,
        /// Plan the export of a resource IR written by `modelc compile -o`.
        #[arg(long, value_name = "FILE", conflicts_with = "path")]
        ir: Option<PathBuf>,
        #[command(flatten)]
        partial: PartialArgs,
        /// Exit with 3 (not 0) when the export would be accepted and change something.
        #[arg(long)]
        detailed_exitcode: bool,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Apply desired state to this machine: compile the model at PATH (or read `--ir FILE`, or
    /// the stored `--version N`) and deploy the resources of this machine's agents (the agent
    /// named by its host name or `localhost`, and agents whose AgentConfig uri is `local:`), or
    /// of the `--agent`s given. Exit status 0 when everything converged, 1 when a resource
    /// failed, was blocked, has no handler or cannot be deployed here.
    #[command(disable_version_flag = true)]
    Deploy {
        /// The model: a .cf file, or a project directory (with project.yml). Default: the nearest
        /// project.yml above the current directory.
        #[arg(value_name = "PATH", conflicts_with_all = ["ir", "stored_version"])]
        path: Option<PathBuf>,
        /// Deploy a resource IR written by `modelc compile -o`.
        #[arg(long, value_name = "FILE", conflicts_with = "stored_version")]
        ir: Option<PathBuf>,
        /// Deploy a stored version (see `modelc versions`).
        #[arg(long = "version", id = "stored_version", value_name = "N")]
        version: Option<u64>,
        /// Deploy the resources of this agent (repeatable) instead of this machine's agents.
        #[arg(long = "agent", value_name = "NAME")]
        agents: Vec<String>,
        /// How many resources are deployed at once. Default: the number of cores, or one per
        /// host resources are deployed on over ssh (up to --hosts), if that is more.
        #[arg(long, short = 'j', value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        jobs: Option<u64>,
        /// Change nothing: report what would change (with a diff of file content), what is
        /// unchanged, and what cannot be evaluated before what it requires changes. `--noop` is
        /// the same switch: every resource is noop, whatever its own meta parameters say.
        #[arg(long, visible_alias = "noop")]
        dry_run: bool,
        /// At most N resources deploy at once across the whole graph (on top of `-j` and of
        /// the resources' own semaphores).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        sema: Option<u64>,
        #[command(flatten)]
        remote: RemoteArg,
        /// Deploy only in the order the model states: without the edges the resources imply
        /// (a file after the directory that holds it, …; see docs/runtime.md).
        #[arg(long)]
        no_autoedges: bool,
        /// Apply every resource on its own: without grouping those a handler can apply together
        /// (the files of one directory, …; see docs/runtime.md).
        #[arg(long)]
        no_autogroup: bool,
        /// A YAML graph of resources and edges (docs/runtime.md): deployed alone, or, with a
        /// model (PATH, `--ir` or `--version`), merged with it at its handover vertices
        #[arg(long, value_name = "FILE", conflicts_with = "watch")]
        graph: Option<PathBuf>,
        /// Keep the machine converged after the first run (continuous mode): deploy the store's
        /// latest version (or `--version N`), repair drift as it happens, check polled resources
        /// on their interval, and swap in each version `modelc export` stores. Ctrl-C lets
        /// running resources finish and exits (status 130)
        #[arg(long)]
        watch: bool,
        /// With `--watch`: exit once nothing has changed for S seconds: 0 when everything
        /// converged, 1 when a resource failed or is blocked
        #[arg(long, value_name = "S", requires = "watch", value_parser = seconds)]
        converged_timeout: Option<f64>,
        /// With `--watch`: exit after S seconds in any case
        #[arg(long, value_name = "S", requires = "watch", value_parser = seconds)]
        max_runtime: Option<f64>,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Show the last deploy recorded in the store and its resources that did not converge.
    Status {
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Delete all but the latest N versions (never the one the last deploy applied), drop the
    /// stored rows no kept version can see, and give the space back to the file system.
    Prune {
        /// How many of the latest versions to keep (1 or more).
        #[arg(long, value_name = "N", value_parser = versions_to_keep)]
        keep: u64,
        /// Say what would be removed, and remove nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        store: StoreArg,
    },
    /// Manage the store itself: `store migrate` lays out a PostgreSQL store (or upgrades it),
    /// `store info` says what a store is.
    Store {
        #[command(subcommand)]
        action: StoreAction,
    },
    /// List the stored versions, oldest first.
    Versions {
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Show a stored version (the latest without VERSION): its resources by set. `--format json`
    /// prints a JSON list of its resources, each with its id, attributes, requires and resource_set.
    Show {
        /// The version to show (see `modelc versions`). Default: the latest.
        #[arg(value_name = "VERSION")]
        number: Option<u64>,
        /// Only the resources whose id contains TEXT (an id shows that resource), each in full:
        /// attributes, requirements and set.
        #[arg(long, value_name = "TEXT")]
        filter: Option<String>,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Compare two stored versions: resources added, removed and changed (attribute by
    /// attribute). `--format json` for a JSON document.
    Diff {
        /// The version to compare from.
        #[arg(value_name = "A")]
        from: u64,
        /// The version to compare to.
        #[arg(value_name = "B")]
        to: u64,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Release a stored version (the latest without VERSION): agents of a server deploy only
    /// released versions, in order. Releasing a version older than the latest released one is
    /// refused; releasing it again changes nothing.
    Release {
        #[arg(value_name = "VERSION")]
        number: Option<u64>,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// List the actions agents reported (each check of a resource, with its result and times),
    /// in the order they were received.
    Actions {
        /// Only this agent's.
        #[arg(long, value_name = "NAME")]
        agent: Option<String>,
        /// Only those started at or after this RFC 3339 time.
        #[arg(long, value_name = "TIME")]
        since: Option<String>,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Manage API tokens of a server: `token create --role R` prints a new token once (only its
    /// hash is kept), `token list`, `token revoke ID`. Directly on a PostgreSQL store
    /// (`--store`), or through a server with an admin token.
    Token {
        #[command(subcommand)]
        action: TokenCommand,
    },
    /// Serve a PostgreSQL store to exporters, readers and agents: a JSON API under /api/v1
    /// (docs/server.md). Plain HTTP only on loopback, unless --insecure-http.
    Server {
        /// The store: a `postgresql://` URL, laid out by `modelc store migrate`.
        #[arg(long = "store", value_name = "URL", env = "MODELC_STORE")]
        store: String,
        /// The address to listen on (port 0: any free port, printed at start).
        #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8414")]
        listen: std::net::SocketAddr,
        /// The certificate chain to serve HTTPS with (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// The certificate's private key (PEM).
        #[arg(long, value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<PathBuf>,
        /// Serve plain HTTP on an address other than loopback (tokens cross the network in
        /// clear text).
        #[arg(long)]
        insecure_http: bool,
        /// Keep the latest N versions, pruning the others every --prune-interval (never the
        /// latest released version nor one an agent is deploying).
        #[arg(long, value_name = "N", value_parser = versions_to_keep)]
        keep: Option<u64>,
        /// How often --keep prunes, in seconds.
        #[arg(long, value_name = "S", default_value = "60", value_parser = seconds)]
        prune_interval: f64,
        /// The largest request body taken, in bytes (compressed).
        #[arg(long, value_name = "BYTES", default_value_t = modelc_server::DEFAULT_MAX_BODY)]
        max_body: usize,
        /// How long an agent's name stays held after its last call, in seconds.
        #[arg(long, value_name = "S", default_value = "30", value_parser = seconds)]
        lease: f64,
        /// Database connections at most.
        #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1000))]
        connections: u32,
    },
    /// Deploy the resources of the named agents from a `modelc server` and keep them
    /// converged: each released version that changes them, a repair every --repair-interval,
    /// and when a file they manage changes. Every check is reported as an action, exactly once
    /// (docs/server.md). Runs until SIGINT or SIGTERM.
    Agent {
        /// An agent this process deploys (repeatable); each is held by one process at a time.
        #[arg(long = "name", value_name = "NAME", required = true)]
        names: Vec<String>,
        /// Where the agents keep their lock, desired state, outbox and file contents.
        #[arg(long, value_name = "DIR")]
        state_dir: PathBuf,
        /// Check (and repair) every resource this often without a new version, in seconds.
        #[arg(long, value_name = "S", default_value = "3600", value_parser = seconds)]
        repair_interval: f64,
        /// How many resources each agent deploys at once.
        #[arg(short, long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        jobs: Option<u32>,
        /// The server (`https://host:port`); the token comes from MODELC_TOKEN or --token-file.
        #[arg(long = "server", value_name = "URL")]
        server: String,
        /// A file holding the agent's token (instead of MODELC_TOKEN).
        #[arg(long = "token-file", value_name = "FILE")]
        token_file: Option<PathBuf>,
        /// The certificate authority (PEM) that signed the server's certificate.
        #[arg(long = "server-ca", value_name = "FILE", env = "MODELC_SERVER_CA")]
        ca: Option<PathBuf>,
        /// How long a long poll waits at most, in seconds (tests shorten it).
        #[arg(long, value_name = "S", hide = true, value_parser = seconds)]
        poll: Option<f64>,
        #[command(flatten)]
        remote: RemoteArg,
    },
    /// Format .cf files in the one canonical layout (docs/fmt.md): the files named, the .cf
    /// files under the directories named, or under the current directory. Files with syntax
    /// errors are left alone.
    Fmt {
        /// .cf files, or directories whose .cf files are formatted. Default: the current directory.
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Change nothing: list the files that would change; exit status 1 if there are any.
        #[arg(long)]
        check: bool,
    },
    /// Run the language server on stdin and stdout, for editors (see docs/editors.md):
    /// diagnostics as you type for the project of the workspace (its project.yml) or for
    /// files on their own.
    Lsp,
    /// Print the reference of a module as Markdown (`--format json` for JSON): its entities
    /// with their attributes and the relations, indexes, implements and resource declarations
    /// about each, its typedefs, implementations, plugins and top-level variables, with their
    /// documentation. `modelc doc` documents std, which every model has (also outside a
    /// project); `modelc doc web` a module of the project at PATH or around the current directory.
    Doc {
        /// The module: `std`, one of the project's modules, or a submodule (`web::sub`).
        #[arg(default_value = "std")]
        module: String,
        /// The project: a directory with a project.yml, or a model file in it.
        path: Option<PathBuf>,
    },
    /// Explain a diagnostic code, e.g. `modelc explain E0006`; `--list` lists every code.
    Explain {
        /// A diagnostic code, such as E0006 or W0003 (any case).
        #[arg(value_name = "CODE", required_unless_present = "list")]
        code: Option<String>,
        /// List every code with its severity, name and title.
        #[arg(long, conflicts_with = "code")]
        list: bool,
    },
    /// Print a shell completion script, e.g. `modelc completions bash > /etc/bash_completion.d/modelc`.
    Completions {
        /// The shell the script is for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// A partial export's options, for `export` and `plan`.
#[derive(Debug, clap::Args)]
pub struct PartialArgs {
    /// Build the new version from the latest one, replacing only this model's resource sets.
    #[arg(long)]
    pub partial: bool,
    /// Delete this resource set in the new version (repeatable; only with --partial).
    #[arg(long = "delete-resource-set", value_name = "NAME", requires = "partial")]
    pub delete_resource_set: Vec<String>,
    /// Do not delete a set named by --delete-resource-set that this model still has resources
    /// for (only with --partial).
    #[arg(long, requires = "partial")]
    pub soft_delete: bool,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token and print it (alone, on stdout); its id and role go to stderr.
    Create {
        /// What it may do: export (export, plan, release, read), agent (deploy its agents),
        /// read, or admin (everything, tokens included).
        #[arg(long, value_parser = parse_role)]
        role: modelc_store::postgres::fleet::Role,
        /// An agent token's agents (repeatable).
        #[arg(long = "agent", value_name = "NAME")]
        agents: Vec<String>,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// List the tokens (never the secrets).
    List {
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
    /// Revoke a token by its id: calls with it are refused from now on.
    Revoke {
        #[arg(value_name = "ID")]
        id: String,
        #[command(flatten)]
        store: StoreArg,
        #[command(flatten)]
        server: ServerArg,
    },
}

fn parse_role(text: &str) -> Result<modelc_store::postgres::fleet::Role, String> {
    modelc_store::postgres::fleet::Role::parse(text)
        .ok_or_else(|| format!("`{text}` is not a role: export, agent, read or admin"))
}

#[derive(Debug, Subcommand)]
pub enum StoreAction {
    /// Create the layout of a store in an empty PostgreSQL database, or upgrade an older one,
    /// in one transaction (every other command refuses a database that is not laid out). The
    /// embedded store lays itself out when it is first written.
    Migrate {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Print the store's backend, layout version, versions and size.
    Info {
        #[command(flatten)]
        store: StoreArg,
    },
    /// Copy every version of one store (with its number, time and message, and its file
    /// contents) into another that holds no version, of either backend: to move a project's
    /// history from the embedded store to PostgreSQL, or back. Each version is read back and
    /// compared before the copy commits; a failed copy leaves the target as it was.
    Copy {
        /// The store to copy from: a path or a `postgresql://` URL.
        #[arg(long, value_name = "PATH|URL", value_parser = parse_store)]
        from: modelc_store::Locator,
        /// The store to copy into: an empty PostgreSQL store (`modelc store migrate` first), or
        /// the path of an embedded store that does not exist yet or holds no version.
        #[arg(long, value_name = "PATH|URL", value_parser = parse_store)]
        to: modelc_store::Locator,
    },
}

/// A `modelc server` to use instead of a store.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServerArg {
    /// Use this `modelc server` (`https://host:port`) instead of a store. The token comes from
    /// MODELC_TOKEN or --token-file, never from the command line.
    #[arg(long = "server", id = "server", value_name = "URL", conflicts_with = "store")]
    pub url: Option<String>,
    /// A file holding the server's token (instead of MODELC_TOKEN).
    #[arg(long = "token-file", value_name = "FILE", requires = "server")]
    pub token_file: Option<PathBuf>,
    /// The certificate authority (PEM) that signed the server's certificate, when the web does
    /// not know it.
    #[arg(long = "server-ca", value_name = "FILE", env = "MODELC_SERVER_CA", requires = "server")]
    pub ca: Option<PathBuf>,
}

/// How resources whose context (`via`) is another host or user are reached (docs/runtime.md).
#[derive(Debug, clap::Args)]
pub struct RemoteArg {
    /// At most N connections to other hosts are open at once (resources whose context is a
    /// `mitogen::Ssh` or `mitogen::Sudo`).
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..))]
    pub hosts: u64,
    /// Where targets keep the helper modelc copies to them (`~/` is the connecting user's home).
    #[arg(long, value_name = "DIR", default_value = modelc_runtime::remote::DEFAULT_CACHE_DIR)]
    pub helper_dir: String,
}

impl RemoteArg {
    pub fn options(&self) -> modelc_runtime::remote::RemoteOptions {
        modelc_runtime::remote::RemoteOptions {
            max_open: usize::try_from(self.hosts).unwrap_or(usize::MAX),
            cache_dir: self.helper_dir.clone(),
            helper: None,
        }
    }
}

/// Where the versioned store is.
#[derive(Debug, clap::Args)]
pub struct StoreArg {
    /// Where the store is: a `postgresql://user@host:port/dbname` URL (the password from
    /// PGPASSWORD or ~/.pgpass), or the path of the embedded store's database file. Default:
    /// `.modelc/store.sqlite` in the project directory (the nearest one with a project.yml, or the
    /// directory of the model file).
    #[arg(long = "store", id = "store", value_name = "PATH|URL", env = "MODELC_STORE", value_parser = parse_store)]
    pub path: Option<modelc_store::Locator>,
}

fn parse_store(text: &str) -> Result<modelc_store::Locator, String> {
    modelc_store::Locator::parse(text).map_err(|error| error.to_string())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
    /// `compile -o`: the reference exporter's JSON list.
    Reference,
    /// `graph`: Graphviz.
    Dot,
    /// `graph`: a Mermaid flowchart.
    Mermaid,
}

impl Format {
    /// Whether diagnostics are printed as JSON on stdout.
    pub fn json_diagnostics(self) -> bool {
        self == Format::Json
    }

    /// Whether this format is not one `command` writes.
    pub fn unsupported_by(self, command: &str) -> bool {
        match self {
            // The language server speaks its protocol, completions are a script.
            Format::Json => matches!(command, "lsp" | "completions"),
            Format::Human => false,
            Format::Reference => command != "compile",
            Format::Dot | Format::Mermaid => command != "graph",
        }
    }
}

/// How many versions `prune` keeps: at least the latest.
fn versions_to_keep(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        Ok(_) => Err("prune keeps at least the latest version: give 1 or more".to_owned()),
        Err(_) => Err(format!("`{text}` is not a number of versions (1 or more)")),
    }
}

/// A number of seconds: finite and not negative.
fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Ok(s),
        _ => Err(format!("`{text}` is not a number of seconds (0 or more)")),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        // clap checks names, conflicts and requirements of every subcommand only when it is
        // used: all of them at once here.
        <super::Cli as clap::CommandFactory>::command().debug_assert();
    }
}
