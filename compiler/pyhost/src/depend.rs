//! The host's `depend` message: the exported resources, for the modules' dependency managers,
//! answered with the resources whose `requires` the managers changed.

use modelc_exec::{DependAnswer, DependBatch};
use modelc_std_plugins::PluginContext;
use modelc_value::Value;
use serde::{Deserialize, Serialize};

use crate::codec::Wire;

/// A `depend` request, serialized as one line: the managers (`[module, function]`) and each
/// resource as `[id, its instance, its fields, the ids it requires]`.
pub(crate) fn request(batch: &DependBatch<'_>, context: &dyn PluginContext) -> Vec<u8> {
    let models: Vec<Value> = batch.resources.iter().map(|r| Value::Instance(r.instance)).collect();
    let resources: Vec<_> = batch
        .resources
        .iter()
        .zip(&models)
        .map(|(resource, model)| {
            let fields: serde_json::Map<String, serde_json::Value> =
                resource.fields.iter().map(|(name, value)| ((*name).to_owned(), (*value).clone())).collect();
            (resource.id, Wire { value: model, context }, fields, resource.requires)
        })
        .collect();
    let managers: Vec<(&str, &str)> = batch.managers.iter().map(|m| (m.module.as_str(), m.function.as_str())).collect();
    crate::process::line(&Request { op: "depend", managers, resources })
}

#[derive(Serialize)]
struct Request<'a> {
    op: &'static str,
    managers: Vec<(&'a str, &'a str)>,
    resources: Vec<Resource<'a>>,
}

/// `[id, its instance, its fields, the ids it requires]`.
type Resource<'a> = (&'a str, Wire<'a>, serde_json::Map<String, serde_json::Value>, &'a [String]);

/// The host's answer: the changed resources, or why the managers failed.
#[derive(Deserialize)]
struct Reply {
    changed: Option<Vec<(usize, Vec<String>)>>,
    failed: Option<String>,
    detail: Option<String>,
}

pub(crate) fn read(line: &[u8]) -> Result<DependAnswer, (String, Option<String>)> {
    let reply: Reply = serde_json::from_slice(line)
        .map_err(|why| (format!("the plugin host's answer could not be read: {why}"), None))?;
    match reply.changed {
        Some(changed) => Ok(DependAnswer { changed }),
        None => Err((reply.failed.unwrap_or_else(|| "the plugin host did not answer".to_owned()), reply.detail)),
    }
}
