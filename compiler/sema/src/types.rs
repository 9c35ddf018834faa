//! Types as the checker sees them: the declared types of attributes (`string?`, `std::port[]`)
//! and the static types it infers for expressions.

use std::fmt;

/// The primitive type names. They are resolved before any user type of the same name.
pub const PRIMITIVES: &[&str] = &["string", "int", "float", "number", "bool", "list", "dict"];

/// The primitive names that can be called as casts: `int("5")`.
pub const CASTS: &[&str] = &["string", "int", "float", "number", "bool"];

/// The base of a declared attribute or plugin parameter type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BaseType {
    String,
    Int,
    Float,
    /// Deprecated: any int, float or bool.
    Number,
    Bool,
    /// A list of literals.
    List,
    /// A dict of literals.
    Dict,
    /// A typedef, by fully qualified name.
    Typedef(String),
    /// An entity (relations and plugin parameters only).
    Entity(String),
    /// Plugin parameters only: anything.
    Any,
    /// A name that did not resolve; its error is reported where it is written.
    Unresolved,
}

impl BaseType {
    pub fn primitive(name: &str) -> Option<BaseType> {
        Some(match name {
            "string" => BaseType::String,
            "int" => BaseType::Int,
            "float" => BaseType::Float,
            "number" => BaseType::Number,
            "bool" => BaseType::Bool,
            "list" => BaseType::List,
            "dict" => BaseType::Dict,
            _ => return None,
        })
    }
}

impl fmt::Display for BaseType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BaseType::String => f.write_str("string"),
            BaseType::Int => f.write_str("int"),
            BaseType::Float => f.write_str("float"),
            BaseType::Number => f.write_str("number"),
            BaseType::Bool => f.write_str("bool"),
            BaseType::List => f.write_str("list"),
            BaseType::Dict => f.write_str("dict"),
            BaseType::Typedef(name) | BaseType::Entity(name) => f.write_str(name),
            BaseType::Any => f.write_str("any"),
            BaseType::Unresolved => f.write_str("?"),
        }
    }
}

/// A declared type: base, `[]` and `?`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ValueType {
    pub base: BaseType,
    pub list: bool,
    pub nullable: bool,
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{}", self.base, if self.list { "[]" } else { "" }, if self.nullable { "?" } else { "" })
    }
}

/// What the checker knows statically about the value of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum StaticType {
    Null,
    Bool,
    Int,
    Float,
    Str,
    List,
    Dict,
    /// An instance of this entity or of one of its subtypes.
    Instance(String),
    /// Not known statically.
    Any,
}

impl StaticType {
    /// How the reference names the type in messages.
    pub fn describe(&self) -> String {
        match self {
            StaticType::Null => "null".to_owned(),
            StaticType::Bool => "bool".to_owned(),
            StaticType::Int => "int".to_owned(),
            StaticType::Float => "float".to_owned(),
            StaticType::Str => "string".to_owned(),
            StaticType::List => "list".to_owned(),
            StaticType::Dict => "dict".to_owned(),
            StaticType::Instance(entity) => format!("an instance of {entity}"),
            StaticType::Any => "any".to_owned(),
        }
    }

    /// Numbers for arithmetic and comparison: bools count, as in Python.
    pub fn is_number(&self) -> bool {
        matches!(self, StaticType::Bool | StaticType::Int | StaticType::Float)
    }

    pub fn is_known(&self) -> bool {
        !matches!(self, StaticType::Any)
    }
}

/// A static type together with whether the value is certainly not unknown. Unknown values
/// (from plugins such as `std::get_env`) pass every operator without error, so type errors are
/// certain only for values that cannot be unknown: literals and what is computed from them.
#[derive(Debug, Clone, PartialEq)]
pub struct Inferred {
    pub ty: StaticType,
    /// The value cannot be unknown.
    pub definite: bool,
}

impl Inferred {
    pub fn any() -> Inferred {
        Inferred { ty: StaticType::Any, definite: false }
    }

    pub fn definite(ty: StaticType) -> Inferred {
        Inferred { ty, definite: true }
    }

    pub fn maybe_unknown(ty: StaticType) -> Inferred {
        Inferred { ty, definite: false }
    }

    /// The type, if it is known and the value cannot be unknown.
    pub fn certain(&self) -> Option<&StaticType> {
        (self.definite && self.ty.is_known()).then_some(&self.ty)
    }
}
