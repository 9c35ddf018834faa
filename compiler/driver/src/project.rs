//! Finding the project: a single `.cf` file, or a directory with `project.yml` whose entry
//! point is `main.cf` and whose `modulepath` lists the directories holding its modules.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// What to compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// `.cf` files on their own, in the order given.
    Files(Vec<PathBuf>),
    Project(Project),
    /// A module checked on its own (a directory with `model/_init.cf` and no `project.yml`):
    /// all its files are roots, and its parent directory is the module path.
    Module {
        name: String,
        root: PathBuf,
        module_paths: Vec<PathBuf>,
    },
}

/// A project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    pub root: PathBuf,
    /// `main.cf` in the root.
    pub main: PathBuf,
    /// The `modulepath` directories, resolved against the root, in the order given.
    pub module_paths: Vec<PathBuf>,
    /// What looks wrong in `project.yml` without stopping the load: a key that looks like a
    /// misspelt `modulepath`.
    pub warnings: Vec<String>,
    /// `python`: the Python environment (an interpreter or an environment's directory) that
    /// runs the modules' plugins, resolved against the root.
    pub python: Option<PathBuf>,
}

/// Why nothing could be loaded. These are usage or I/O problems, not problems of a model.
#[derive(Debug)]
pub enum LoadError {
    NotFound(PathBuf),
    NoProject { searched_from: PathBuf },
    NotAModel(PathBuf),
    BadProjectFile { path: PathBuf, reason: String },
    Io { path: PathBuf, error: std::io::Error },
    TooLarge(PathBuf),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::NotFound(path) => write!(f, "{} does not exist", path.display()),
            LoadError::NoProject { searched_from } => write!(
                f,
                "no project.yml found in {} or any parent directory; pass a .cf file or a project directory",
                searched_from.display()
            ),
            LoadError::NotAModel(path) => {
                write!(
                    f,
                    "{} is neither a .cf file, a project (with project.yml) nor a module (with model/_init.cf)",
                    path.display()
                )
            }
            LoadError::BadProjectFile { path, reason } => write!(f, "{}: {reason}", path.display()),
            LoadError::Io { path, error } => write!(f, "cannot read {}: {error}", path.display()),
            LoadError::TooLarge(path) => write!(f, "{} is larger than 4 GiB", path.display()),
        }
    }
}

impl std::error::Error for LoadError {}

/// The parts of `project.yml` modelc reads; other keys are allowed and ignored.
#[derive(Debug, Deserialize)]
struct ProjectFile {
    #[serde(default)]
    modulepath: Option<OneOrMany>,
    #[serde(default)]
    python: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl Target {
    /// The project's `python` setting, if it is a project and has one.
    pub fn python_setting(&self) -> Option<&Path> {
        match self {
            Target::Project(project) => project.python.as_deref(),
            _ => None,
        }
    }
}

/// Resolves the user's PATH argument, or (when absent) walks up from `cwd` to the nearest
/// directory with a `project.yml`.
pub fn locate(path: Option<&Path>, cwd: &Path) -> Result<Target, LoadError> {
    let Some(path) = path else {
        let mut dir = Some(cwd);
        while let Some(candidate) = dir {
            if candidate.join("project.yml").is_file() {
                return load_project(candidate);
            }
            dir = candidate.parent();
        }
        return Err(LoadError::NoProject { searched_from: cwd.to_owned() });
    };
    let path = if path.is_absolute() { path.to_owned() } else { cwd.join(path) };
    if !path.exists() {
        return Err(LoadError::NotFound(path));
    }
    if path.is_dir() {
        if path.join("project.yml").is_file() {
            return load_project(&path);
        }
        if path.join("model/_init.cf").is_file()
            && let Some(name) = path.file_name().and_then(|n| n.to_str())
        {
            let parent = path.parent().map(Path::to_path_buf).unwrap_or_default();
            return Ok(Target::Module { name: name.to_owned(), root: path.clone(), module_paths: vec![parent] });
        }
        return Err(LoadError::NotAModel(path));
    }
    if path.extension().is_some_and(|e| e == "cf") {
        // A file of a project (its `main.cf`, or a partial model beside it) is compiled with the
        // project's modules.
        if let Some(dir) = path.parent().filter(|d| d.join("project.yml").is_file())
            && let Target::Project(mut project) = load_project(dir)?
        {
            project.main = path;
            return Ok(Target::Project(project));
        }
        return Ok(Target::Files(vec![path]));
    }
    Err(LoadError::NotAModel(path))
}

fn load_project(root: &Path) -> Result<Target, LoadError> {
    let file = root.join("project.yml");
    let text = std::fs::read_to_string(&file).map_err(|error| LoadError::Io { path: file.clone(), error })?;
    let parsed: ProjectFile = if text.trim().is_empty() {
        ProjectFile { modulepath: None, python: None }
    } else {
        if let Some(line) = nested_too_deep(&text) {
            let reason = format!(
                "brackets nest more than {MAX_YAML_NESTING} levels deep at line {line}; no project file needs that, \
                 and the YAML reader would take a time quadratic in the depth to say so"
            );
            return Err(LoadError::BadProjectFile { path: file.clone(), reason });
        }
        serde_yaml_ng::from_str(&text)
            .map_err(|e| LoadError::BadProjectFile { path: file.clone(), reason: e.to_string() })?
    };
    let module_paths = match parsed.modulepath {
        None => Vec::new(),
        Some(OneOrMany::One(one)) => vec![one],
        Some(OneOrMany::Many(many)) => many,
    };
    // A modulepath directory that is not there is not warned of: a new project's `libs` is made
    // when its first module is installed. An unknown module's error says where modelc looked.
    let warnings = misspelt_keys(&text);
    Ok(Target::Project(Project {
        root: root.to_owned(),
        main: root.join("main.cf"),
        module_paths: module_paths.into_iter().map(|p| root.join(p)).collect(),
        warnings,
        python: parsed.python.map(|p| root.join(p)),
    }))
}

/// The deepest flow nesting (`[`, `{`) read: the YAML reader's own limit (a real recursion).
const MAX_YAML_NESTING: usize = 128;

/// The line where the YAML's flow collections (`[`, `{`) nest deeper than the reader accepts,
/// found in one pass. The reader (libyaml's scanner) would refuse it too, but only after
/// rescanning its open collections at every token: 40,000 `[` took 16 s. Brackets inside quotes
/// and comments are not counted.
fn nested_too_deep(text: &str) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let mut chars = text.chars().peekable();
    let mut previous = '\n';
    while let Some(c) = chars.next() {
        match c {
            '\n' => line += 1,
            '#' if previous.is_whitespace() => while chars.next_if(|&n| n != '\n').is_some() {},
            '\'' | '"' => {
                // To the closing quote (`''` inside single quotes, `\` escapes inside double).
                while let Some(q) = chars.next() {
                    match q {
                        '\n' => line += 1,
                        '\\' if c == '"' => {
                            chars.next();
                        }
                        _ if q == c => {
                            if c == '\'' && chars.next_if_eq(&'\'').is_some() {
                                continue;
                            }
                            break;
                        }
                        _ => {}
                    }
                }
            }
            '[' | '{' => {
                depth += 1;
                if depth > MAX_YAML_NESTING {
                    return Some(line);
                }
            }
            ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        previous = c;
    }
    None
}

/// Top-level keys of `project.yml` that look like `modulepath` misspelt (`module_path`,
/// `modulepaths`): modelc would ignore them, and the modules would not be found.
fn misspelt_keys(text: &str) -> Vec<String> {
    let Ok(serde_yaml_ng::Value::Mapping(map)) = serde_yaml_ng::from_str::<serde_yaml_ng::Value>(text) else {
        return Vec::new();
    };
    let squashed = |k: &str| k.to_ascii_lowercase().replace(['_', '-', ' '], "");
    map.keys()
        .filter_map(|k| k.as_str())
        .filter(|k| *k != "modulepath")
        .filter(|k| {
            let k = squashed(k);
            k == "modulepath" || k == "modulepaths" || k == "modulespath" || k == "modulespaths"
        })
        .map(|k| format!("project.yml: `{k}` is not a setting modelc reads; did you mean `modulepath`?"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("modelc-driver-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn deep_yaml_nesting_is_refused_before_the_reader_sees_it() {
        let deep = format!("name: p\nmodulepath: {}\n", "[".repeat(40_000));
        assert_eq!(nested_too_deep(&deep), Some(2));
        // Brackets in quotes and comments do not count; 128 levels are still read.
        let quoted = format!("name: '{0}'\ndescription: \"{0}\" # {0}\n", "[".repeat(500));
        assert_eq!(nested_too_deep(&quoted), None);
        let fine = format!("x: {}{}\n", "[".repeat(128), "]".repeat(128));
        assert_eq!(nested_too_deep(&fine), None);
        let root = temp_dir("deep-yaml");
        std::fs::write(root.join("project.yml"), &deep).expect("write");
        match load_project(&root) {
            Err(LoadError::BadProjectFile { reason, .. }) => {
                assert!(reason.contains("more than 128 levels deep at line 2"), "{reason}");
            }
            other => panic!("expected a bad project file, got {other:?}"),
        }
    }

    #[test]
    fn a_file_beside_project_yml_is_compiled_with_the_project() {
        let root = temp_dir("file-in-project");
        std::fs::write(root.join("project.yml"), "modulepath: libs\n").expect("write");
        std::fs::write(root.join("main.cf"), "").expect("write");
        std::fs::write(root.join("partial.cf"), "").expect("write");
        for file in ["main.cf", "partial.cf"] {
            let Ok(Target::Project(project)) = locate(Some(Path::new(file)), &root) else { panic!("{file}") };
            assert_eq!((project.main, project.module_paths), (root.join(file), vec![root.join("libs")]));
        }
        let elsewhere = temp_dir("file-alone");
        std::fs::write(elsewhere.join("x.cf"), "").expect("write");
        assert_eq!(locate(Some(Path::new("x.cf")), &elsewhere).ok(), Some(Target::Files(vec![elsewhere.join("x.cf")])));
    }

    #[test]
    fn walks_up_to_the_project_and_reads_modulepath() {
        let root = temp_dir("walk");
        std::fs::write(root.join("project.yml"), "name: demo\nmodulepath: [libs, vendor]\nrepo: x\n").expect("write");
        std::fs::create_dir_all(root.join("a/b")).expect("mkdir");
        let target = locate(None, &root.join("a/b")).expect("found");
        let Target::Project(project) = target else { panic!("{target:?}") };
        assert_eq!(project.root, root);
        assert_eq!(project.module_paths, vec![root.join("libs"), root.join("vendor")]);
    }

    #[test]
    fn a_single_modulepath_string_and_bad_files() {
        let root = temp_dir("single");
        std::fs::write(root.join("project.yml"), "modulepath: libs\n").expect("write");
        let Ok(Target::Project(project)) = locate(Some(&root), &root) else { panic!() };
        assert_eq!(project.module_paths, vec![root.join("libs")]);
        std::fs::write(root.join("project.yml"), "modulepath: [unclosed\n").expect("write");
        assert!(matches!(locate(Some(&root), &root), Err(LoadError::BadProjectFile { .. })));
        assert!(matches!(locate(Some(Path::new("nope.cf")), &root), Err(LoadError::NotFound(_))));
        std::fs::write(root.join("x.txt"), "").expect("write");
        assert!(matches!(locate(Some(Path::new("x.txt")), &root), Err(LoadError::NotAModel(_))));
    }
}
