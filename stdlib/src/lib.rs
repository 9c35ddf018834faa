//! The `std` module of the language, embedded in the binary: its model files (entities,
//! typedefs, implementations and the predefined operating systems), its templates, the
//! signatures of its plugins (what `check` needs), and the declarations of the public modules'
//! resources. The plugins themselves are implemented in `modelc-std-plugins`, which only
//! execution needs.
//!
//! The model files are ordinary `.cf` source, checked by the same compiler as user code; a test
//! keeps them free of diagnostics.

pub mod docstring;
pub mod plugin_docs;
pub mod signatures;

pub use signatures::{Param, ParamKind, PluginSignature};

/// The two directories of a module that plugins read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ModuleDir {
    /// `files/`: `std::source`, `std::file`, `std::list_files`.
    Files,
    /// `templates/`: `std::template`.
    Templates,
}

/// One file of the std module: the namespace it defines, a display name, and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdFile {
    /// `std` or `std::testing`.
    pub namespace: &'static str,
    /// How diagnostics name the file.
    pub display_name: &'static str,
    pub text: &'static str,
}

/// The files of the std module, `std` first.
pub static FILES: &[StdFile] = &[
    StdFile { namespace: "std", display_name: "<std>/model/_init.cf", text: include_str!("../model/_init.cf") },
    StdFile {
        namespace: "std::testing",
        display_name: "<std>/model/testing.cf",
        text: include_str!("../model/testing.cf"),
    },
];

/// Resource declarations for public modules whose resources the reference defines in Python
/// (`fs`, `exec`): applied by refinement to the entities of those modules when they are loaded,
/// unless the model declares its own. Entity names are written in full.
pub static MODULE_SHAPES: &str = include_str!("../shapes/modules.cf");

/// The std template at `path` (relative to the module's `templates/` directory).
pub fn template(path: &str) -> Option<&'static str> {
    match path {
        "host_uri.j2" => Some(include_str!("../templates/host_uri.j2")),
        _ => None,
    }
}
