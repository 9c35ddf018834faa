//! std's own resource types: `testing::NullResource` (nothing to deploy; fails when `fail` is
//! true, for testing what a failure does), and `AgentConfig` (configures the reference's agents)
//! and `Handover` (where a YAML graph meets the model): nothing to apply on a machine.

use modelc_ir::Resource;

use super::flag;
use crate::handler::{Context, Done, Handler};

pub struct NullHandler;

impl Handler for NullHandler {
    /// A purged null resource is done as soon as a deployed one: there is nothing to remove.
    fn purges(&self) -> bool {
        true
    }

    fn deploy(&self, resource: &Resource, _context: &Context<'_>) -> Result<Done, String> {
        if flag(resource, "fail")? {
            return Err("it is set to fail (`fail = true`)".to_owned());
        }
        Ok(Done::unchanged())
    }
}

pub struct AgentConfigHandler;

impl Handler for AgentConfigHandler {
    fn deploy(&self, _resource: &Resource, _context: &Context<'_>) -> Result<Done, String> {
        Ok(Done::unchanged())
    }
}
