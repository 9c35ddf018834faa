//! The shapes a hand-written graph gives resources ([`modelc_ir::writable`]), derived from the
//! `resource` declarations compiled models are exported by: the ones modelc ships for the
//! public modules (`modelc_stdlib::MODULE_SHAPES`) and std's own. A field is writable when a
//! graph can give it or the attribute it is computed from; what is computed from other
//! instances (`via=mitogen_context(via, host)`) or by Python is not, and neither are the id
//! `name` and the agent, which a vertex gives by its own keys, nor the event flags.

use modelc_db::{FieldSourceSummary, ItemSummary, ResourceSummary};
use modelc_ir::writable::{FieldInput, WritableField, WritableShape};

use crate::index::builtin_resources;

/// Attributes a vertex gives by its own keys (`name`, `agent`) or the runtime decides
/// (`send_event`, `receive_events`): never a vertex's fields.
const NOT_FIELDS: [&str; 3] = ["name", "send_event", "receive_events"];

/// Every resource type a graph can describe, by its declaration; computed once.
pub fn writable_shapes() -> &'static [WritableShape] {
    static SHAPES: std::sync::OnceLock<Vec<WritableShape>> = std::sync::OnceLock::new();
    SHAPES.get_or_init(|| {
        let mut shapes: Vec<WritableShape> = builtin_resources().iter().filter_map(|d| shape(d, &[])).collect();
        for file in modelc_stdlib::FILES {
            let parse = modelc_syntax::parse(modelc_diagnostics::FileId(u32::MAX), file.text);
            let items = ItemSummary::of(&parse.file, file.text);
            for declaration in &items.resources {
                let qualified = ResourceSummary {
                    entity: format!("{}::{}", file.namespace, declaration.entity),
                    ..declaration.clone()
                };
                // Without `fields`, a declaration exports its entity's own plain attributes.
                let own: Vec<&str> = items
                    .entities
                    .iter()
                    .filter(|e| e.name == declaration.entity)
                    .flat_map(|e| e.attributes.iter().map(|a| a.name.as_str()))
                    .collect();
                shapes.extend(shape(&qualified, &own));
            }
        }
        shapes
    })
}

/// The writable shape of one declaration, if it names an identity; `own` are the entity's
/// plain attributes (the fields of a declaration that lists none).
fn shape(declaration: &ResourceSummary, own: &[&str]) -> Option<WritableShape> {
    let id = declaration.id.as_ref()?;
    let agent = match &declaration.agent {
        Some(modelc_db::AgentSummary::Path(path)) if path.len() == 1 => Some(path[0].as_str()),
        _ => None,
    };
    let listed: Vec<(String, FieldSourceSummary)> = match &declaration.fields {
        Some(fields) => fields.clone(),
        None => own.iter().map(|name| ((*name).to_owned(), FieldSourceSummary::Same)).collect(),
    };
    let fields = listed
        .into_iter()
        .filter(|(name, _)| !NOT_FIELDS.contains(&name.as_str()) && Some(name.as_str()) != agent)
        .filter_map(|(name, source)| {
            let input = match source {
                FieldSourceSummary::Same => None,
                FieldSourceSummary::Path(path) => match path.as_slice() {
                    [attribute] => Some(FieldInput::Copy(attribute.clone())),
                    _ => return None,
                },
                FieldSourceSummary::Call(function, args) if function == "file_content" => {
                    match args.first()?.as_slice() {
                        [attribute] => Some(FieldInput::FileContent(attribute.clone())),
                        _ => return None,
                    }
                }
                FieldSourceSummary::Call(..) | FieldSourceSummary::Python => return None,
            };
            Some(WritableField { name, input })
        })
        .collect();
    let mut required: Vec<String> = std::iter::once(id.clone())
        .chain(declaration.paths.iter().flatten().cloned())
        .filter(|name| name != "name")
        .collect();
    dedup_in_order(&mut required);
    Some(WritableShape { entity_type: declaration.entity.clone(), required, fields })
}

fn dedup_in_order(names: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_of(entity: &str) -> &'static WritableShape {
        writable_shapes().iter().find(|s| s.entity_type == entity).unwrap_or_else(|| panic!("no shape for {entity}"))
    }

    #[test]
    fn a_file_is_written_with_its_declared_fields_and_their_sources() {
        let file = shape_of("fs::File");
        assert_eq!(file.required, ["path"]);
        assert_eq!(file.writable_names(), ["path", "owner", "hash", "group", "permissions", "content", "mode"]);
        let hash = file.fields.iter().find(|f| f.name == "hash").unwrap();
        assert_eq!(hash.input, Some(FieldInput::FileContent("content".to_owned())));
        assert!(!file.accepts("via"), "the mitogen context is the runtime's to decide");
    }

    #[test]
    fn identities_and_occupied_paths_are_required() {
        assert_eq!(shape_of("fs::Symlink").required, ["dst", "src"]);
        assert_eq!(shape_of("exec::Run").required, ["command"]);
        // std's own: its fields are the entity's plain attributes, the vertex's keys excepted.
        let null = shape_of("std::testing::NullResource");
        assert!(null.required.is_empty(), "a vertex's name is its identity");
        assert_eq!(null.writable_names(), ["value", "fail"]);
    }
}
