//! The `modelc` command line.
//!
//! [`run`] takes the arguments and the output streams, so tests drive the CLI in-process;
//! [`main`] wires it to the real process. Exit codes: 0 when the model is clean (warnings are
//! allowed), 1 when it has errors, 2 for usage and I/O problems.
#![allow(clippy::disallowed_methods, reason = "the command line reads and writes files, the environment and the clock")]
#![allow(clippy::print_stdout, clippy::print_stderr, reason = "the CLI is where output is printed")]

mod agent;
mod cli;
mod compile;
mod deploy;
mod doc;
mod export;
mod fleet;
mod fmt;
mod output;
mod passwords;
mod place;
mod progress;
mod python;
mod store_admin;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser, ValueEnum};
use modelc_diagnostics::codes;
use modelc_driver::{Target, locate};

pub use cli::{Cli, ColorChoice, Command, Format};
use output::Reporter;

/// Exit status: the model is clean.
pub const EXIT_OK: u8 = 0;
/// Exit status: the model has errors.
pub const EXIT_MODEL_ERRORS: u8 = 1;
/// Exit status: bad usage, or a file could not be read.
pub const EXIT_USAGE: u8 = 2;

/// Where a run writes, and what it knows about its environment.
pub struct Io<'a> {
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    /// Whether stderr is a terminal (for `--color auto`).
    pub stderr_is_terminal: bool,
    /// Whether stdout is a terminal (`--color auto` for what a command prints there: deploy's
    /// results).
    pub stdout_is_terminal: bool,
    /// Whether `NO_COLOR` is set (non-empty).
    pub no_color: bool,
    pub cwd: PathBuf,
    /// The deploy lock file, when not the default one (`MODELC_DEPLOY_LOCK`).
    pub deploy_lock: Option<PathBuf>,
}

/// The stack of the thread that does the work: later phases walk syntax trees recursively,
/// and a generous stack keeps that safe up to the parser's nesting cap even in debug builds.
const WORKER_STACK: usize = 256 << 20;

/// The process entry point.
pub fn main() -> std::process::ExitCode {
    let worker = std::thread::Builder::new().stack_size(WORKER_STACK).spawn(run_process);
    match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(code)) => code,
        _ => std::process::ExitCode::from(EXIT_USAGE),
    }
}

fn run_process() -> std::process::ExitCode {
    // Not locked for the whole run: the language server writes stdout from a thread of its own.
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    let mut io = Io {
        stderr_is_terminal: std::io::stderr().is_terminal(),
        stdout_is_terminal: std::io::stdout().is_terminal(),
        no_color: std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        deploy_lock: std::env::var_os("MODELC_DEPLOY_LOCK").map(PathBuf::from),
        stdout: &mut stdout,
        stderr: &mut stderr,
    };
    std::process::ExitCode::from(run(std::env::args_os(), &mut io))
}

/// Runs the command line `args` (including the program name) and returns the exit status.
pub fn run(args: impl IntoIterator<Item = impl Into<OsString> + Clone>, io: &mut Io<'_>) -> u8 {
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // Whether JSON was asked for, known even when the rest of the command line is wrong.
    let json_asked = args.windows(2).any(|pair| pair[0] == "--format" && pair[1] == "json")
        || args.iter().any(|arg| arg == "--format=json");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` arrive here too, and belong on stdout.
            if !error.use_stderr() {
                let _ = write!(io.stdout, "{}", error.render());
                return EXIT_OK;
            }
            if json_asked {
                // clap's first line names the argument (`unexpected argument '--frmat' found`);
                // the rest (tips, usage) is the detail.
                let text = error.render().to_string();
                let message = text.lines().next().unwrap_or_default().trim_start_matches("error: ").to_owned();
                let document =
                    serde_json::json!({"error": {"kind": "usage", "message": message, "detail": text.trim_end()}});
                let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&document).unwrap_or_default());
            }
            // `--color` is not known yet when parsing failed: follow the terminal.
            let rendered = error.render();
            if io.stderr_is_terminal && !io.no_color {
                let _ = write!(io.stderr, "{}", rendered.ansi());
            } else {
                let _ = write!(io.stderr, "{rendered}");
            }
            return EXIT_USAGE;
        }
    };
    let color = match cli.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => io.stderr_is_terminal && !io.no_color,
    };
    JSON_OUTPUT.set(cli.format.json_diagnostics());
    QUIET.set(cli.quiet);
    crate::python::set(crate::python::PythonOptions {
        flag: cli.python.clone(),
        // A limit past a year is no limit; capped so deadlines stay representable.
        timeout: std::time::Duration::from_secs_f64(cli.plugin_timeout.min(3.2e7)),
        python_shapes: cli.python_shapes,
    });
    VERBOSE.set(cli.verbose);
    let name = match &cli.command {
        Command::Parse { .. } => "parse",
        Command::Check { .. } => "check",
        Command::Compile { .. } => "compile",
        Command::Graph { .. } => "graph",
        Command::Export { .. } => "export",
        Command::Plan { .. } => "plan",
        Command::Deploy { .. } => "deploy",
        Command::Status { .. } => "status",
        Command::Versions { .. } => "versions",
        Command::Prune { .. } => "prune",
        Command::Show { .. } => "show",
        Command::Diff { .. } => "diff",
        Command::Release { .. } => "release",
        Command::Actions { .. } => "actions",
        Command::Token { .. } => "token",
        Command::Server { .. } => "server",
        Command::Agent { .. } => "agent",
        Command::Store { .. } => "store",
        Command::Explain { .. } => "explain",
        Command::Doc { .. } => "doc",
        Command::Lsp => "lsp",
        Command::Fmt { .. } => "fmt",
        Command::Completions { .. } => "completions",
    };
    if cli.format.unsupported_by(name) {
        let format = cli.format.to_possible_value().map(|v| v.get_name().to_owned()).unwrap_or_default();
        return usage_error(io, &format!("`--format {format}` is not an output of `modelc {name}`"));
    }
    // What these commands print as text echoes the store and the model (ids, messages, values):
    // escaped on its way to the terminal, by the rule diagnostics follow. JSON escapes by itself;
    // what a model prints (`compile`) stays byte-exact. `deploy` escapes its results itself
    // (`deploy/progress.rs`), so that they can be coloured.
    let echoes_data = matches!(name, "versions" | "show" | "diff" | "status" | "plan" | "prune" | "export" | "store");
    if echoes_data && cli.format == Format::Human {
        let mut safe = modelc_diagnostics::terminal::SafeWriter::new(&mut *io.stdout);
        let mut safe_io = Io {
            stdout: &mut safe,
            stderr: &mut *io.stderr,
            stderr_is_terminal: io.stderr_is_terminal,
            stdout_is_terminal: io.stdout_is_terminal,
            no_color: io.no_color,
            cwd: io.cwd.clone(),
            deploy_lock: io.deploy_lock.clone(),
        };
        return dispatch(cli, color, &mut safe_io);
    }
    dispatch(cli, color, io)
}

/// Runs the command the line asked for.
fn dispatch(cli: Cli, color: bool, io: &mut Io<'_>) -> u8 {
    match cli.command {
        Command::Parse { files, dump_ast } => parse(&files, dump_ast, cli.format, color, io),
        Command::Check { path } => check(path.as_deref(), cli.format, color, io),
        Command::Compile { path, dump_instances, output, partial, store } => {
            let options =
                compile::Options { dump_instances, output, partial, format: cli.format, color, store: store.path };
            compile::run(path.as_deref(), &options, io)
        }
        Command::Graph { path, autoedges, store } => {
            compile::graph(path.as_deref(), store.path.as_ref(), autoedges, cli.format, color, io)
        }
        Command::Export { path, ir, partial, message, force, release, store, server } => {
            let server = match place::server(&server, release, &io.cwd) {
                Ok(server) => server,
                Err(message) => return usage_error(io, &message),
            };
            let request = export::Request {
                partial: partial.partial,
                force,
                delete_sets: partial.delete_resource_set,
                soft_delete: partial.soft_delete,
                message,
                store: store.path,
                server,
                release,
                ir,
            };
            export::export(path.as_deref(), &request, cli.format, color, io)
        }
        Command::Deploy {
            path,
            ir,
            version,
            agents,
            jobs,
            dry_run,
            sema,
            remote,
            no_autoedges,
            no_autogroup,
            graph,
            watch,
            converged_timeout,
            max_runtime,
            store,
        } => {
            let request = deploy::Request {
                path,
                ir,
                version,
                store: store.path,
                agents,
                jobs: jobs.map(|j| j as usize),
                dry_run,
                sema: sema.map(|n| n as usize),
                remote: remote.options(),
                no_autoedges,
                no_autogroup,
                graph,
                watch,
                converged_timeout,
                max_runtime,
                interrupt: interrupt_on_ctrl_c(),
                // The results go to stdout: coloured on a terminal there, or when asked.
                color_results: match cli.color {
                    ColorChoice::Always => true,
                    ColorChoice::Never => false,
                    ColorChoice::Auto => io.stdout_is_terminal && !io.no_color,
                },
            };
            deploy::deploy(&request, cli.format, color, io)
        }
        Command::Status { store, server } => match place::server(&server, false, &io.cwd) {
            Ok(Some(server)) => fleet::fleet_status(&place::Place::Server(server), cli.format, color, io),
            Ok(None) => deploy::status(store.path.as_ref(), cli.format, color, io),
            Err(message) => usage_error(io, &message),
        },
        Command::Store { action: cli::StoreAction::Migrate { store } } => {
            store_admin::migrate(store.path.as_ref(), cli.format, color, io)
        }
        Command::Store { action: cli::StoreAction::Info { store } } => {
            store_admin::info(store.path.as_ref(), cli.format, color, io)
        }
        Command::Store { action: cli::StoreAction::Copy { from, to } } => {
            store_admin::copy(&from, &to, cli.format, color, io)
        }
        Command::Versions { store, server } => match place(store.path.as_ref(), &server, io) {
            Ok(place) => export::versions(&place, cli.format, color, io),
            Err(status) => status,
        },
        Command::Prune { keep, dry_run, store } => {
            export::prune(keep, dry_run, store.path.as_ref(), cli.format, color, io)
        }
        Command::Show { number, filter, store, server } => match place(store.path.as_ref(), &server, io) {
            Ok(place) => export::show(number, filter.as_deref(), &place, cli.format, color, io),
            Err(status) => status,
        },
        Command::Diff { from, to, store, server } => match place(store.path.as_ref(), &server, io) {
            Ok(place) => export::diff(from, to, &place, cli.format, color, io),
            Err(status) => status,
        },
        Command::Release { number, store, server } => match place(store.path.as_ref(), &server, io) {
            Ok(place) => fleet::release_command(number, &place, cli.format, color, io),
            Err(status) => status,
        },
        Command::Actions { agent, since, store, server } => match place(store.path.as_ref(), &server, io) {
            Ok(place) => fleet::actions_command(agent.as_deref(), since.as_deref(), &place, cli.format, color, io),
            Err(status) => status,
        },
        Command::Token { action } => {
            let (action, store, server) = match action {
                cli::TokenCommand::Create { role, agents, store, server } => {
                    (fleet::TokenAction::Create { role, agents }, store, server)
                }
                cli::TokenCommand::List { store, server } => (fleet::TokenAction::List, store, server),
                cli::TokenCommand::Revoke { id, store, server } => (fleet::TokenAction::Revoke { id }, store, server),
            };
            match place(store.path.as_ref(), &server, io) {
                Ok(place) => fleet::token_command(action, &place, cli.format, color, io),
                Err(status) => status,
            }
        }
        Command::Server {
            store,
            listen,
            tls_cert,
            tls_key,
            insecure_http,
            keep,
            prune_interval,
            max_body,
            lease,
            connections,
        } => {
            let mut config = modelc_server::Config::new(store, listen);
            config.tls = tls_cert.zip(tls_key).map(|(cert, key)| modelc_server::TlsFiles {
                cert: if cert.is_absolute() { cert } else { io.cwd.join(cert) },
                key: if key.is_absolute() { key } else { io.cwd.join(key) },
            });
            config.insecure_http = insecure_http;
            config.keep = keep;
            config.prune_interval = std::time::Duration::from_secs_f64(prune_interval.max(1.0));
            config.max_body = max_body;
            config.lease = std::time::Duration::from_secs_f64(lease.max(1.0));
            config.connections = connections as usize;
            match modelc_server::run(config) {
                Ok(()) => EXIT_OK,
                Err(message) => usage_error(io, &message),
            }
        }
        Command::Agent { names, state_dir, repair_interval, jobs, server, token_file, ca, poll, remote } => {
            let request = agent::Request {
                names,
                state_dir,
                repair_interval,
                jobs,
                server,
                token_file,
                ca,
                poll,
                remote: remote.options(),
            };
            agent::agent(&request, interrupt_on_ctrl_c(), io)
        }
        Command::Plan { path, ir, partial, detailed_exitcode, store, server } => {
            let server = match place::server(&server, false, &io.cwd) {
                Ok(server) => server,
                Err(message) => return usage_error(io, &message),
            };
            let request = export::PlanRequest {
                ir,
                partial: partial.partial.then_some(modelc_store::PartialRequest {
                    delete_sets: partial.delete_resource_set,
                    soft_delete: partial.soft_delete,
                }),
                detailed_exitcode,
                store: store.path,
                server,
            };
            export::plan(path.as_deref(), &request, cli.format, color, io)
        }
        Command::Doc { module, path } => doc::doc(&module, path.as_deref(), cli.format, io),
        Command::Explain { code, list } => explain(code.as_deref(), list, cli.format, io),
        Command::Fmt { paths, check } => fmt::fmt(&paths, check, cli.format.json_diagnostics(), io),
        Command::Lsp => match modelc_lsp::stdio() {
            Ok(()) => EXIT_OK,
            Err(error) => {
                let _ = writeln!(io.stderr, "error: the language server stopped: {error}");
                EXIT_USAGE
            }
        },
        Command::Completions { shell } => {
            // Written in one piece: clap_complete panics on a write error (`| head`), a closed
            // pipe is not one here.
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "modelc", &mut script);
            let _ = io.stdout.write_all(&script);
            EXIT_OK
        }
    }
}

/// Where a command's versions are: `--server`, else the store (`--store`, `MODELC_STORE`, or the
/// project's).
fn place(store: Option<&modelc_store::Locator>, server: &cli::ServerArg, io: &mut Io<'_>) -> Result<place::Place, u8> {
    match place::server(server, false, &io.cwd) {
        Ok(Some(server)) => Ok(place::Place::Server(server)),
        Ok(None) => Ok(place::Place::Store(export::store_locator(store, None, &io.cwd))),
        Err(message) => Err(usage_error(io, &message)),
    }
}

/// `modelc parse FILE...`: syntax only.
fn parse(paths: &[PathBuf], dump_ast: bool, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let paths: Vec<PathBuf> = paths.iter().map(|p| if p.is_absolute() { p.clone() } else { io.cwd.join(p) }).collect();
    if let Some(dir) = paths.iter().find(|p| p.is_dir()) {
        return usage_error(
            io,
            &format!("{} is a directory: `parse` takes .cf files (`check` takes a project directory)", dir.display()),
        );
    }
    let loaded = match modelc_driver::load(&Target::Files(paths), &io.cwd) {
        Ok(loaded) => loaded,
        Err(error) => return usage_error(io, &error.to_string()),
    };
    let mut diagnostics = loaded.diagnostics.clone();
    diagnostics.extend(modelc_driver::parse_all(&loaded.files, |parse| {
        if dump_ast {
            let _ = write!(io.stdout, "{}", modelc_syntax::dump::dump(&parse.file));
        }
    }));
    Reporter { files: &loaded.files, format, color, file_count: loaded.files.len() }.finish(
        io,
        &mut diagnostics,
        "parsed",
    )
}

/// `modelc check [PATH]`: syntax, names and types of every file the project loads.
fn check(path: Option<&Path>, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let mut loaded = match load_target(path, io) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let checked = modelc_driver::check(&mut loaded);
    crate::python::report_check(&checked.python_modules, &loaded, io);
    let mut diagnostics = loaded.diagnostics.clone();
    diagnostics.extend(checked.diagnostics);
    Reporter { files: &loaded.files, format, color, file_count: checked.files }.finish(io, &mut diagnostics, "checked")
}

/// Finds what PATH names (or the project around the current directory) and reads its files;
/// a usage error is reported and its exit status returned.
pub(crate) fn load_target(path: Option<&Path>, io: &mut Io<'_>) -> Result<modelc_driver::Loaded, u8> {
    let loaded = locate(path, &io.cwd).and_then(|target| crate::python::load(&target, io));
    loaded.map_err(|error| usage_error(io, &error.to_string()))
}

/// `modelc explain CODE`.
fn explain(code: Option<&str>, list: bool, format: Format, io: &mut Io<'_>) -> u8 {
    let json = format.json_diagnostics();
    if list {
        if json {
            let all: Vec<serde_json::Value> = codes::ALL.iter().map(|c| code_json(c, false)).collect();
            let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&all).unwrap_or_default());
        } else {
            for code in codes::ALL {
                let _ = writeln!(
                    io.stdout,
                    "{}  {:<7}  {:<36}  {}",
                    code.id,
                    code.severity.as_str(),
                    code.name,
                    title(code)
                );
            }
        }
        return EXIT_OK;
    }
    let code = code.unwrap_or_default();
    match codes::lookup(code) {
        Some(code) if json => {
            let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&code_json(code, true)).unwrap_or_default());
            EXIT_OK
        }
        Some(code) => {
            let _ = write!(io.stdout, "{}", code.explanation);
            EXIT_OK
        }
        None => usage_error(
            io,
            &format!(
                "`{code}` is not a modelc diagnostic code (they look like E0006 or W0001; `modelc explain --list` lists them)"
            ),
        ),
    }
}

/// An explanation's title: its first heading without the code (`Block without \`end\``).
fn title(code: &codes::Code) -> &'static str {
    let first = code.explanation.lines().next().unwrap_or_default();
    let heading = first.trim_start_matches('#').trim();
    heading.split_once(": ").map_or(heading, |(_, title)| title)
}

/// A code as `explain --format json` gives it; with its Markdown explanation if asked.
fn code_json(code: &'static codes::Code, explanation: bool) -> serde_json::Value {
    let mut value = serde_json::json!({
        "code": code.id,
        "name": code.name,
        "severity": code.severity.as_str(),
        "title": title(code),
    });
    if explanation {
        value["explanation"] = serde_json::Value::String(code.explanation.to_owned());
    }
    value
}

/// The ids of every diagnostic code modelc can report (what `modelc explain` accepts).
pub fn registered_codes() -> Vec<&'static str> {
    codes::ALL.iter().map(|c| c.id).collect()
}

pub(crate) fn usage_error(io: &mut Io<'_>, message: &str) -> u8 {
    let _ = writeln!(io.stderr, "error: {message}");
    if JSON_OUTPUT.get() {
        // In JSON mode stdout always holds one document, also when the command could not run.
        let document = serde_json::json!({"error": {"kind": "usage", "message": message, "detail": message}});
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&document).unwrap_or_default());
    }
    EXIT_USAGE
}

thread_local! {
    /// Whether the running command prints JSON (`--format json`), for the errors that stop it
    /// before it prints anything else.
    static JSON_OUTPUT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// `--quiet`: diagnostics only.
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// `--verbose`: phase times too.
    static VERBOSE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether summaries and confirmations are printed (not `--quiet`).
pub(crate) fn chatty() -> bool {
    !QUIET.get()
}

/// Whether the output is JSON (`--format json`).
pub(crate) fn json_output() -> bool {
    JSON_OUTPUT.get()
}

/// Whether phase times are printed (`--verbose`).
pub(crate) fn verbose() -> bool {
    VERBOSE.get()
}

/// A flag Ctrl-C sets (SIGINT, and SIGTERM): a deploy lets running resources finish and starts
/// no more. A second Ctrl-C while the flag is set exits at once (status 1).
fn interrupt_on_ctrl_c() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // The conditional shutdown is registered first, so it sees the flag before this
        // signal sets it.
        let _ = signal_hook::flag::register_conditional_shutdown(signal, 1, std::sync::Arc::clone(&flag));
        let _ = signal_hook::flag::register(signal, std::sync::Arc::clone(&flag));
    }
    flag
}
