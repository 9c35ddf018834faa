//! Name resolution for types (entities, typedefs, implementations, plugins) and namespaces,
//! following spec §4.11:
//!
//! * unqualified `T`: the file's own namespace, then its ancestors (`m::x` sees `m`'s types);
//!   `main.cf` (`__config__`) does not see `std` unqualified;
//! * qualified `p::T`: `p` must be the file's own namespace, `std`, or a name one of the file's
//!   imports makes usable; `T` must be defined directly in that namespace.

use modelc_db::ImportSummary;

use crate::index::{Declarations, TypeKind};

/// What a file can see: its namespace and its imports.
#[derive(Debug, Clone, Copy)]
pub struct FileScope<'a> {
    pub namespace: &'a str,
    pub imports: &'a [ImportSummary],
}

/// A resolved type name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub fqn: String,
    pub kind: TypeKind,
}

/// Why a name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// No type of that name where it was looked for. `namespace` is where the lookup ended.
    NotFound { name: String, namespace: String },
    /// `p::T` where `p` is a module that exists but is not imported by this file.
    MissingImport { prefix: String },
    /// `p::T` where `p` is no namespace the project has.
    UnknownNamespace { prefix: String },
}

impl FileScope<'_> {
    /// The namespace a qualifier stands for in this file.
    pub fn namespace_of(&self, index: &(impl Declarations + ?Sized), prefix: &str) -> Result<String, ResolveError> {
        if prefix == self.namespace || prefix == "std" {
            return Ok(prefix.to_owned());
        }
        if let Some(import) = self.imports.iter().find(|i| i.visible_name() == prefix) {
            return Ok(import.module.clone());
        }
        if index.has_namespace(prefix) {
            return Err(ResolveError::MissingImport { prefix: prefix.to_owned() });
        }
        Err(ResolveError::UnknownNamespace { prefix: prefix.to_owned() })
    }

    /// Resolves a type name as written (`A`, `std::Entity`, `m::x::T`).
    pub fn resolve_type(&self, index: &(impl Declarations + ?Sized), written: &str) -> Result<Resolved, ResolveError> {
        match written.rsplit_once("::") {
            Some((prefix, name)) => {
                let namespace = self.namespace_of(index, prefix)?;
                match index.type_in(&namespace, name) {
                    Some(kind) => Ok(Resolved { fqn: format!("{namespace}::{name}"), kind }),
                    None => Err(ResolveError::NotFound { name: written.to_owned(), namespace }),
                }
            }
            None => {
                let mut namespace = self.namespace;
                loop {
                    if let Some(kind) = index.type_in(namespace, written) {
                        return Ok(Resolved { fqn: format!("{namespace}::{written}"), kind });
                    }
                    match namespace.rsplit_once("::") {
                        Some((parent, _)) => namespace = parent,
                        None => break,
                    }
                }
                Err(ResolveError::NotFound { name: written.to_owned(), namespace: self.namespace.to_owned() })
            }
        }
    }

    /// "Did you mean" candidates for a name that did not resolve, closest first. Computed only
    /// when the error is reported: a failed lookup is often a question (is this a type?), and
    /// comparing the name with every type of a large project for each made compiles quadratic.
    pub fn suggestions(&self, index: &(impl Declarations + ?Sized), error: &ResolveError) -> Vec<String> {
        match error {
            ResolveError::NotFound { name, namespace } => match name.rsplit_once("::") {
                Some((prefix, last)) => index
                    .type_names_of(namespace)
                    .into_iter()
                    .filter(|n| crate::suggest::close(last, n))
                    .map(|n| format!("{prefix}::{n}"))
                    .take(3)
                    .collect(),
                None => self.unqualified_suggestions(index, name),
            },
            ResolveError::UnknownNamespace { prefix } => {
                let mut usable: Vec<&str> = vec![self.namespace, "std"];
                usable.extend(self.imports.iter().map(ImportSummary::visible_name));
                crate::suggest::similar(prefix, usable.into_iter())
            }
            ResolveError::MissingImport { .. } => Vec::new(),
        }
    }

    fn unqualified_suggestions(&self, index: &(impl Declarations + ?Sized), written: &str) -> Vec<String> {
        let mut candidates: Vec<String> = Vec::new();
        let mut ns = self.namespace;
        loop {
            candidates.extend(index.type_names_of(ns));
            match ns.rsplit_once("::") {
                Some((parent, _)) => ns = parent,
                None => break,
            }
        }
        let mut suggestions = crate::suggest::similar(written, candidates.iter().map(String::as_str));
        // The classic mistakes: a name of std, or of an imported module, without its
        // module's prefix.
        let mut qualified: Vec<String> = Vec::new();
        if index.type_in("std", written).is_some() && self.namespace != "std" {
            qualified.push(format!("std::{written}"));
        }
        for import in self.imports {
            let prefixed = format!("{}::{written}", import.visible_name());
            if index.type_in(&import.module, written).is_some() && !qualified.contains(&prefixed) {
                qualified.push(prefixed);
            }
        }
        suggestions.splice(0..0, qualified);
        suggestions.truncate(3);
        suggestions
    }
}
