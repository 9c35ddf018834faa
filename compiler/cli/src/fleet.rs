//! The commands of a team's fleet: `modelc release`, `modelc actions`, `modelc token`, and
//! `modelc status` of a server's agents. Each works with `--server` (and a token) or directly
//! on a PostgreSQL store (`--store postgresql://…`), which keeps releases, tokens and actions;
//! an embedded store has none of them, and says so.

use modelc_client::store_error;
use modelc_store::postgres::fleet::{Action, Release, Role, Status, Token};
use modelc_store::{Locator, PgStore, StoreError};

use crate::place::Place;
use crate::{EXIT_OK, EXIT_USAGE, Format, Io};

/// Releases `version` (`None`: the latest).
pub(crate) fn release(place: &Place, version: Option<u64>) -> Result<Release, StoreError> {
    match place {
        Place::Server(server) => server.client.release(version).map_err(store_error),
        Place::Store(locator) => pg(locator, "releases")?.release(version),
    }
}

/// A PostgreSQL store, for what only it keeps.
fn pg(locator: &Locator, what: &str) -> Result<PgStore, StoreError> {
    match locator {
        Locator::Postgres(url) => PgStore::open(url),
        Locator::Embedded(path) => Err(StoreError::Storage(format!(
            "{what} are kept by a PostgreSQL store or a server, not by the embedded store {} (its latest version is \
             what `modelc deploy` applies)",
            path.display()
        ))),
    }
}

/// `modelc release [V]`.
pub(crate) fn release_command(version: Option<u64>, place: &Place, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let release = match release(place, version) {
        Ok(release) => release,
        Err(error) => return crate::export::store_failure(io, format, color, &error, place),
    };
    if format.json_diagnostics() {
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&release).unwrap_or_default());
    } else if release.already {
        let _ = writeln!(io.stdout, "version {} was already released at {}", release.version, release.released);
    } else {
        let agents = if release.agents.is_empty() { "none".to_owned() } else { release.agents.join(", ") };
        let _ = writeln!(io.stdout, "released version {}; agents it changes: {agents}", release.version);
    }
    EXIT_OK
}

/// `modelc actions [--agent A] [--since T]`.
pub(crate) fn actions_command(
    agent: Option<&str>,
    since: Option<&str>,
    place: &Place,
    format: Format,
    color: bool,
    io: &mut Io<'_>,
) -> u8 {
    let actions = match place {
        Place::Server(server) => server.client.actions(agent, since).map_err(store_error),
        Place::Store(locator) => pg(locator, "actions").and_then(|store| store.actions(agent, since)),
    };
    let actions = match actions {
        Ok(actions) => actions,
        Err(error) => return crate::export::store_failure(io, format, color, &error, place),
    };
    if format.json_diagnostics() {
        let list: Vec<serde_json::Value> = actions.iter().map(action_json).collect();
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(&list).unwrap_or_default());
        return EXIT_OK;
    }
    let _ = writeln!(
        io.stdout,
        "{:<24}  {:<24}  {:<12}  {:>7}  {:<13}  resource",
        "started", "finished", "agent", "version", "result"
    );
    for a in &actions {
        let _ = writeln!(
            io.stdout,
            "{:<24}  {:<24}  {:<12}  {:>7}  {:<13}  {}",
            a.started,
            a.finished.as_deref().unwrap_or("-"),
            a.agent,
            a.version,
            a.result.as_deref().unwrap_or("deploying"),
            a.id
        );
    }
    EXIT_OK
}

/// An action as `actions --format json` lists it.
fn action_json(action: &Action) -> serde_json::Value {
    serde_json::json!({
        "action_id": action.action_id,
        "id": action.id,
        "agent": action.agent,
        "version": action.version,
        "result": action.result,
        "started": action.started,
        "finished": action.finished,
    })
}

/// `modelc status --server`: the agents and their resources' latest results.
pub(crate) fn fleet_status(place: &Place, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let status = match place {
        Place::Server(server) => server.client.status(None).map_err(store_error),
        Place::Store(locator) => pg(locator, "agents' results").and_then(|store| store.status(None)),
    };
    let status = match status {
        Ok(status) => status,
        Err(error) => return crate::export::store_failure(io, format, color, &error, place),
    };
    print_status(&status, format, io)
}

/// `{version, agents, resources}`, or tables; exit status 1 when a resource did not converge.
pub(crate) fn print_status(status: &Status, format: Format, io: &mut Io<'_>) -> u8 {
    let converged = status.resources.iter().all(|r| matches!(r.result.as_str(), "changed" | "unchanged" | "guarded"));
    if format.json_diagnostics() {
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(status).unwrap_or_default());
    } else {
        let version = status.version.map_or_else(|| "none".to_owned(), |v| v.to_string());
        let _ = writeln!(io.stdout, "released version: {version}");
        let _ = writeln!(io.stdout, "{:<20}  {:<9}  {:>7}", "agent", "connected", "version");
        for agent in &status.agents {
            let deployed = agent.version.map_or_else(|| "-".to_owned(), |v| v.to_string());
            let connected = if agent.connected { "yes" } else { "no" };
            let _ = writeln!(io.stdout, "{:<20}  {connected:<9}  {deployed:>7}", agent.name);
        }
        let _ = writeln!(io.stdout);
        let _ =
            writeln!(io.stdout, "{:<13}  {:>7}  {:<12}  {:<24}  resource", "result", "version", "agent", "finished");
        for r in &status.resources {
            let _ = writeln!(
                io.stdout,
                "{:<13}  {:>7}  {:<12}  {:<24}  {}",
                r.result,
                r.version,
                r.agent,
                r.finished.as_deref().unwrap_or("-"),
                r.id
            );
            if let Some(error) = &r.error {
                let _ = writeln!(io.stdout, "{:<13}  {error}", "");
            }
        }
    }
    if converged { EXIT_OK } else { crate::EXIT_MODEL_ERRORS }
}

/// What `modelc token` does.
pub(crate) enum TokenAction {
    Create { role: Role, agents: Vec<String> },
    List,
    Revoke { id: String },
}

/// `modelc token create|list|revoke`: `create` prints the token alone on stdout (its id and
/// role on stderr), once: only its hash is kept.
pub(crate) fn token_command(action: TokenAction, place: &Place, format: Format, color: bool, io: &mut Io<'_>) -> u8 {
    let failed = |io: &mut Io<'_>, error: StoreError| crate::export::store_failure(io, format, color, &error, place);
    match action {
        TokenAction::Create { role, agents } => {
            let request = modelc_api::TokenRequest { role, agents };
            if let Err(message) = request.check() {
                return crate::usage_error(io, &message);
            }
            let created = match place {
                Place::Server(server) => server.client.create_token(&request).map_err(store_error),
                Place::Store(locator) => pg(locator, "tokens").and_then(|mut store| {
                    let token = modelc_api::new_token()?;
                    let info = store.create_token(&modelc_api::hash_token(&token), request.role, &request.agents)?;
                    Ok(modelc_api::TokenCreated { token, info })
                }),
            };
            match created {
                Ok(created) => {
                    let _ = writeln!(io.stdout, "{}", created.token);
                    let agents = if created.info.agents.is_empty() {
                        String::new()
                    } else {
                        format!(" for agents {}", created.info.agents.join(", "))
                    };
                    let _ = writeln!(
                        io.stderr,
                        "created token {} with role {}{agents}: it is shown once, keep it now",
                        created.info.id,
                        created.info.role.as_str()
                    );
                    EXIT_OK
                }
                Err(error) => failed(io, error),
            }
        }
        TokenAction::List => {
            let tokens = match place {
                Place::Server(server) => server.client.tokens().map_err(store_error),
                Place::Store(locator) => pg(locator, "tokens").and_then(|store| store.tokens()),
            };
            match tokens {
                Ok(tokens) => {
                    print_tokens(&tokens, format, io);
                    EXIT_OK
                }
                Err(error) => failed(io, error),
            }
        }
        TokenAction::Revoke { id } => {
            let revoked = match place {
                Place::Server(server) => server.client.revoke_token(&id).map(|()| true).map_err(store_error),
                Place::Store(locator) => pg(locator, "tokens").and_then(|mut store| store.revoke_token(&id)),
            };
            match revoked {
                Ok(true) => {
                    let _ = writeln!(io.stderr, "revoked token {id}");
                    EXIT_OK
                }
                Ok(false) => crate::usage_error(io, &format!("there is no token {id}")),
                Err(StoreError::Storage(message)) if message.contains("no such token") => {
                    let _ = writeln!(io.stderr, "error: there is no token {id}");
                    EXIT_USAGE
                }
                Err(error) => failed(io, error),
            }
        }
    }
}

fn print_tokens(tokens: &[Token], format: Format, io: &mut Io<'_>) {
    if format.json_diagnostics() {
        let _ = writeln!(io.stdout, "{}", serde_json::to_string_pretty(tokens).unwrap_or_default());
        return;
    }
    let _ = writeln!(io.stdout, "{:<16}  {:<7}  {:<20}  {:<20}  agents", "id", "role", "created", "revoked");
    for t in tokens {
        let _ = writeln!(
            io.stdout,
            "{:<16}  {:<7}  {:<20}  {:<20}  {}",
            t.id,
            t.role.as_str(),
            t.created,
            t.revoked.as_deref().unwrap_or("-"),
            t.agents.join(", ")
        );
    }
}
