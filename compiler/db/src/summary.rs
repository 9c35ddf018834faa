//! Item summaries: what a file declares, reduced to names and types as written. They carry no
//! spans, so they stay equal across edits that move text or change statement blocks.

use modelc_syntax::ast::{AttrBase, File, ImplRef, Item};

/// The declarations of one file, in source order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ItemSummary {
    pub entities: Vec<EntitySummary>,
    /// Typedef names with their base type as written.
    pub typedefs: Vec<(String, String)>,
    /// Implementation names with the entity they are for.
    pub implementations: Vec<(String, String)>,
    /// `Entity.attribute` for each relation end this file declares, with the target entity.
    pub relation_ends: Vec<(String, String)>,
    /// Indexed entity and attributes.
    pub indexes: Vec<(String, Vec<String>)>,
    /// `implement` statements: entity and implementation names (`parents` included).
    pub implements: Vec<(String, Vec<String>)>,
}

/// An entity's name, parents and attributes (`name: type` as written).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntitySummary {
    pub name: String,
    pub parents: Vec<String>,
    pub attributes: Vec<(String, String)>,
}

impl ItemSummary {
    pub fn of(file: &File) -> ItemSummary {
        let mut summary = ItemSummary::default();
        for item in &file.items {
            match item {
                Item::Entity(e) => summary.entities.push(EntitySummary {
                    name: e.name.name.clone(),
                    parents: e.parents.iter().map(|p| p.text()).collect(),
                    attributes: e
                        .attributes
                        .iter()
                        .map(|a| {
                            let base = match &a.ty.base {
                                AttrBase::Named(path) => path.text(),
                                AttrBase::Dict => "dict".to_owned(),
                            };
                            let ty = format!(
                                "{base}{}{}",
                                if a.ty.list { "[]" } else { "" },
                                if a.ty.nullable { "?" } else { "" }
                            );
                            (a.name.name.clone(), ty)
                        })
                        .collect(),
                }),
                Item::Typedef(t) => summary.typedefs.push((t.name.name.clone(), t.base.text())),
                Item::Implementation(i) => summary.implementations.push((i.name.name.clone(), i.entity.text())),
                Item::Relation(r) => {
                    let left = r.left.entity.text();
                    let right = r.right_entity.text();
                    summary.relation_ends.push((format!("{left}.{}", r.left.attribute.name), right.clone()));
                    if let Some((attribute, _)) = &r.right {
                        summary.relation_ends.push((format!("{right}.{}", attribute.name), left));
                    }
                }
                Item::Index(i) => {
                    summary.indexes.push((i.entity.text(), i.attributes.iter().map(|a| a.name.clone()).collect()));
                }
                Item::Implement(i) => summary.implements.push((
                    i.entity.text(),
                    i.implementations
                        .iter()
                        .map(|r| match r {
                            ImplRef::Named(path) => path.text(),
                            ImplRef::Parents(_) => "parents".to_owned(),
                        })
                        .collect(),
                )),
                Item::Import(_) | Item::Stmt(_) => {}
            }
        }
        summary
    }
}
