//! `modelc agent`: serves agent names from a server (`modelc-agent`) and says what they do on
//! stderr, one line per event, until SIGINT or SIGTERM.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use modelc_agent::Event;
use modelc_client::{Client, ClientOptions};

use crate::{EXIT_OK, EXIT_USAGE, Io, usage_error};

pub(crate) struct Request {
    pub names: Vec<String>,
    pub state_dir: PathBuf,
    pub repair_interval: f64,
    pub jobs: Option<u32>,
    pub server: String,
    pub token_file: Option<PathBuf>,
    pub ca: Option<PathBuf>,
    pub poll: Option<f64>,
    pub remote: modelc_runtime::remote::RemoteOptions,
}

pub(crate) fn agent(request: &Request, stop: Arc<AtomicBool>, io: &mut Io<'_>) -> u8 {
    let token = match crate::place::token(request.token_file.as_deref(), &io.cwd) {
        Ok(token) => token,
        Err(message) => return usage_error(io, &message),
    };
    let absolute = |p: &PathBuf| if p.is_absolute() { p.clone() } else { io.cwd.join(p) };
    let options = ClientOptions { ca: request.ca.as_ref().map(absolute), timeout: None };
    let client = match Client::new(&request.server, Some(token), &options) {
        Ok(client) => client,
        Err(message) => return usage_error(io, &message),
    };
    let mut config = modelc_agent::Config::new(client, absolute(&request.state_dir));
    config.repair_interval = Duration::from_secs_f64(request.repair_interval.max(1.0));
    if let Some(jobs) = request.jobs {
        config.jobs = jobs as usize;
    }
    config.remote = request.remote.clone();
    config.modules = crate::deploy::installed_modules(io);
    if let Some(poll) = request.poll {
        config.poll = Duration::from_secs_f64(poll.max(0.1));
    }
    // The agents' threads say what they do on the process's stderr, a line at a time.
    let result = modelc_agent::run(&config, &request.names, &stop, |name, event| {
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), "{} agent {name}: {}", modelc_store::utc_now(), describe(&event));
    });
    match result {
        Ok(()) => EXIT_OK,
        Err(message) => {
            let _ = writeln!(io.stderr, "error: {message}");
            EXIT_USAGE
        }
    }
}

fn describe(event: &Event) -> String {
    match event {
        Event::Started { known: Some(version) } => format!("started; enforcing version {version} until told otherwise"),
        Event::Started { known: None } => "started; waiting for a released version".to_owned(),
        Event::Deploying { version, resources, repair: false } => {
            format!("deploying version {version} ({resources} resources)")
        }
        Event::Deploying { version, resources, repair: true } => {
            format!("checking version {version} again ({resources} resources)")
        }
        Event::Deployed { version, counts } => {
            let counts: Vec<String> = counts.iter().map(|(result, n)| format!("{n} {result}")).collect();
            format!(
                "version {version}: {}",
                if counts.is_empty() { "nothing to do".to_owned() } else { counts.join(", ") }
            )
        }
        Event::Disconnected => "the server cannot be reached: enforcing the last version, calling again".to_owned(),
        Event::Reconnected => "the server answers again".to_owned(),
        Event::Warning(message) => format!("warning: {message}"),
    }
}
