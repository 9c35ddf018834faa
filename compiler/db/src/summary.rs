//! Item summaries: what a file declares, reduced to names and types as written. They carry no
//! spans, so they stay equal across edits that move text or change statement blocks, and the
//! whole-project tables built from them (`modelc-sema`) are not recomputed after such edits.

use modelc_syntax::ast::{
    AttrBase, AttrDefault, Constraint, FieldSource, File, ImplRef, Item, Multiplicity, ResourceDecl,
    ResourceOptionValue,
};

/// The declarations of one file, in source order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ItemSummary {
    pub imports: Vec<ImportSummary>,
    pub entities: Vec<EntitySummary>,
    pub typedefs: Vec<TypedefSummary>,
    /// Implementation names with the entity they are for, as written.
    pub implementations: Vec<(String, String)>,
    pub relations: Vec<RelationSummary>,
    /// Indexed entity (as written) and attribute names.
    pub indexes: Vec<(String, Vec<String>)>,
    /// `implement` statements: entity and implementation names (`parents` included).
    pub implements: Vec<(String, Vec<String>)>,
    /// Resource declarations (`resource Entity(...)`), the entity as written.
    pub resources: Vec<ResourceSummary>,
    /// The names the file's top level assigns: the variables other files can read as `ns::x`.
    pub variables: Vec<String>,
}

/// A `resource Entity(id=…, agent=…, fields=[…], export_if=…, directory=…, paths=[…])`
/// declaration, names as written (checked by `modelc-sema`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ResourceSummary {
    pub entity: String,
    pub id: Option<String>,
    pub agent: Option<AgentSummary>,
    pub fields: Option<Vec<(String, FieldSourceSummary)>>,
    pub export_if: Option<String>,
    pub directory: Option<String>,
    pub paths: Option<Vec<String>>,
    /// The module's Python class this declaration was read from (`@resource`), when it was.
    pub python: Option<PythonOrigin>,
}

/// The `@resource` class of a module's Python that declares a resource shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PythonOrigin {
    /// The module whose Python defines it (`files`).
    pub module: String,
    /// The class, dotted (`inmanta_plugins.files.Directory`).
    pub class: String,
    /// Where it is, as messages name it.
    pub file: String,
    pub line: u32,
    /// A mapper computes the id attribute (which need not be a field).
    pub id_mapped: bool,
    /// The attributes its mappers read of the entity, as far as the source shows.
    pub reads: Vec<String>,
    /// Why modelc cannot use it (its fields or bases cannot be read without running it): its
    /// entity's resources are not exported then, never given a guessed shape.
    pub unusable: Option<String>,
}

/// Where a resource's agent comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AgentSummary {
    /// `agent="internal"`.
    Literal(String),
    /// `agent=host.name`: attributes followed from the resource; the last is a string.
    Path(Vec<String>),
}

/// Where a declared field's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FieldSourceSummary {
    /// The attribute of the field's own name.
    Same,
    /// Attributes followed from the resource (`permissions=mode`).
    Path(Vec<String>),
    /// An export function applied to paths (`hash=file_content(content, prefix_content)`).
    Call(String, Vec<Vec<String>>),
    /// A mapper of the module's Python class (`get_<field>`, `map`) computes it at export.
    Python,
}

impl ResourceSummary {
    /// Whether exporting these resources runs the module's Python: a usable class with a mapped
    /// field or a mapped id.
    pub fn runs_python(&self) -> bool {
        self.python.as_ref().is_some_and(|origin| {
            origin.unusable.is_none()
                && (origin.id_mapped
                    || self.fields.iter().flatten().any(|(_, source)| *source == FieldSourceSummary::Python))
        })
    }

    /// The declaration as the type table keeps it. Options with a value of the wrong form are
    /// left out (the check reports them).
    pub fn of(decl: &ResourceDecl) -> ResourceSummary {
        let mut out = ResourceSummary { entity: decl.entity.text(), ..ResourceSummary::default() };
        let names = |p: &[modelc_syntax::ast::Ident]| p.iter().map(|i| i.name.clone()).collect::<Vec<_>>();
        for option in &decl.options {
            let path = || match &option.value {
                ResourceOptionValue::Path(path) => Some(names(path)),
                _ => None,
            };
            let single = || path().filter(|p| p.len() == 1).and_then(|p| p.into_iter().next());
            match option.name.name.as_str() {
                "id" => out.id = single(),
                "export_if" => out.export_if = single(),
                "directory" => out.directory = single(),
                "agent" => {
                    out.agent = match &option.value {
                        ResourceOptionValue::Str(text) => text.as_constant().map(AgentSummary::Literal),
                        _ => path().map(AgentSummary::Path),
                    }
                }
                "fields" => {
                    if let ResourceOptionValue::List(items) = &option.value {
                        let field = |item: &modelc_syntax::ast::FieldSpec| {
                            let source = match &item.source {
                                None => FieldSourceSummary::Same,
                                Some(FieldSource::Path(path)) => FieldSourceSummary::Path(names(path)),
                                Some(FieldSource::Call { function, args }) => FieldSourceSummary::Call(
                                    function.name.clone(),
                                    args.iter().map(|a| names(a)).collect(),
                                ),
                            };
                            (item.name.name.clone(), source)
                        };
                        out.fields = Some(items.iter().map(field).collect());
                    }
                }
                "paths" => {
                    if let ResourceOptionValue::List(items) = &option.value {
                        out.paths = Some(items.iter().map(|i| i.name.name.clone()).collect());
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// `import module` or `import module as alias`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ImportSummary {
    pub module: String,
    pub alias: Option<String>,
}

impl ImportSummary {
    /// The name the import makes usable in its file.
    pub fn visible_name(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.module)
    }
}

/// An entity's name, parents and attributes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntitySummary {
    pub name: String,
    pub parents: Vec<String>,
    pub attributes: Vec<AttributeSummary>,
}

/// An attribute declaration: `string? name = "x"`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AttributeSummary {
    pub name: String,
    /// The base type as written: `string`, `std::port`, `dict`.
    pub base: String,
    pub list: bool,
    pub nullable: bool,
    pub default: DefaultSummary,
}

/// Whether and how an attribute declares a default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefaultSummary {
    None,
    /// `= undef`: removes an inherited default.
    Undef,
    Value,
}

/// A typedef: name, base type as written, and its constraint's source text (an expression or
/// `/regex/`), which the project table parses again to evaluate constants against it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypedefSummary {
    pub name: String,
    pub base: String,
    pub constraint: String,
}

/// `A.b [1] -- B.a [0:]`: both ends as written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RelationSummary {
    pub left: RelationEndSummary,
    pub right_entity: String,
    pub right: Option<(String, Bounds)>,
}

/// The entity and attribute of a relation's left end, with its multiplicity.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RelationEndSummary {
    pub entity: String,
    pub attribute: String,
    pub bounds: Bounds,
}

/// A multiplicity: `[1]` is `1..=1`, `[0:]` is `0..` (no upper bound).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bounds {
    pub lower: u64,
    pub upper: Option<u64>,
}

impl Bounds {
    pub fn of(m: &Multiplicity) -> Bounds {
        // Numbers that do not fit count as unbounded: no model means 2^64 instances.
        let num = |text: &Option<String>| text.as_deref().and_then(|t| t.parse::<u64>().ok());
        let lower = num(&m.lower).unwrap_or(0);
        let upper = if m.range { num(&m.upper) } else { num(&m.lower) };
        Bounds { lower, upper }
    }

    /// A cell that holds at most one value: `[1]`, `[0:1]`.
    pub fn is_single(self) -> bool {
        self.upper == Some(1)
    }

    /// `[0:1]`: optional single value.
    pub fn is_optional(self) -> bool {
        self.lower == 0 && self.upper == Some(1)
    }
}

impl ItemSummary {
    /// Summarises `file`, whose source is `text` (for typedef constraints).
    pub fn of(file: &File, text: &str) -> ItemSummary {
        let mut summary = ItemSummary::default();
        for item in &file.items {
            match item {
                Item::Import(import) => summary.imports.push(ImportSummary {
                    module: import.module.text(),
                    alias: import.alias.as_ref().map(|a| a.name.clone()),
                }),
                Item::Entity(e) => summary.entities.push(EntitySummary {
                    name: e.name.name.clone(),
                    parents: e.parents.iter().map(|p| p.text()).collect(),
                    attributes: e
                        .attributes
                        .iter()
                        .map(|a| AttributeSummary {
                            name: a.name.name.clone(),
                            base: match &a.ty.base {
                                AttrBase::Named(path) => path.text(),
                                AttrBase::Dict => "dict".to_owned(),
                            },
                            list: a.ty.list,
                            nullable: a.ty.nullable,
                            default: match &a.default {
                                None => DefaultSummary::None,
                                Some(AttrDefault::Undef(_)) => DefaultSummary::Undef,
                                Some(AttrDefault::Value(_)) => DefaultSummary::Value,
                            },
                        })
                        .collect(),
                }),
                Item::Typedef(t) => {
                    let constraint = match &t.constraint {
                        Constraint::Expr(e) => text.get(e.span.range()).unwrap_or_default().to_owned(),
                        Constraint::Regex(r) => format!("/{}/", r.pattern),
                    };
                    summary.typedefs.push(TypedefSummary {
                        name: t.name.name.clone(),
                        base: t.base.text(),
                        constraint,
                    });
                }
                Item::Implementation(i) => summary.implementations.push((i.name.name.clone(), i.entity.text())),
                Item::Relation(r) => summary.relations.push(RelationSummary {
                    left: RelationEndSummary {
                        entity: r.left.entity.text(),
                        attribute: r.left.attribute.name.clone(),
                        bounds: Bounds::of(&r.left.multiplicity),
                    },
                    right_entity: r.right_entity.text(),
                    right: r.right.as_ref().map(|(attr, m)| (attr.name.clone(), Bounds::of(m))),
                }),
                Item::Resource(r) => summary.resources.push(ResourceSummary::of(r)),
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
                Item::Stmt(stmt) => {
                    if let Some((name, _)) = stmt.declared_variable() {
                        summary.variables.push(name.name.clone());
                    }
                }
            }
        }
        summary.variables.sort_unstable();
        summary.variables.dedup();
        summary
    }
}
