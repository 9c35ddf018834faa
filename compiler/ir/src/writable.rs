//! What a graph written by hand (the YAML front end) may give a resource of each type: its
//! fields and the attributes they are computed from, derived by the compiler from the same
//! `resource` declarations that shape compiled resources (`modelc_sema::resources::
//! writable_shapes`), so that the two front ends cannot disagree on a type's fields.

/// One resource type as a hand-written graph describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableShape {
    pub entity_type: String,
    /// The attributes a vertex must give: the type's identity and the paths it occupies (a
    /// vertex's `name` gives the attribute `name`).
    pub required: Vec<String>,
    /// Its exported fields, in declaration order; a field a vertex does not give is null, as
    /// in a compiled resource whose attribute is null.
    pub fields: Vec<WritableField>,
}

/// An exported field and what a vertex may write for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WritableField {
    pub name: String,
    /// Besides the field itself, the attribute the declaration computes it from, if any.
    pub input: Option<FieldInput>,
}

/// How a field is computed from an attribute a vertex gives instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldInput {
    /// `permissions=mode`: the attribute's value, as it is.
    Copy(String),
    /// `hash=file_content(content, …)`: the sha1 of the attribute's text, which goes to the
    /// content table; a vertex gives the text or the field, and one of them.
    FileContent(String),
}

impl WritableShape {
    /// Whether a vertex may write `name`: a field, or an attribute a field is computed from.
    pub fn accepts(&self, name: &str) -> bool {
        self.fields.iter().any(|f| f.name == name || f.input.as_ref().is_some_and(|i| i.attribute() == name))
    }

    /// Every name a vertex may write, fields first, in declaration order.
    pub fn writable_names(&self) -> Vec<&str> {
        let inputs = self.fields.iter().filter_map(|f| f.input.as_ref().map(FieldInput::attribute));
        let mut names: Vec<&str> = self.fields.iter().map(|f| f.name.as_str()).collect();
        names.extend(inputs);
        names
    }
}

impl FieldInput {
    /// The attribute a vertex writes.
    pub fn attribute(&self) -> &str {
        match self {
            FieldInput::Copy(name) | FieldInput::FileContent(name) => name,
        }
    }
}
